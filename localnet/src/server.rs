//! JSON-RPC 2.0 over HTTP (single and batch requests) in front of the node.

use {
    crate::{dev, node::Node, rpc, timing::RpcLatency},
    axum::{
        body::Bytes,
        extract::{DefaultBodyLimit, Request, State},
        http::{header, HeaderMap, HeaderValue, Method, StatusCode},
        middleware::{self, Next},
        response::{IntoResponse, Response},
        routing::post,
        Router,
    },
    serde_json::{json, Value},
    std::sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
};

/// Requests above this size are refused, as a cluster's RPC does.
pub const MAX_REQUEST_BODY_BYTES: usize = 50 * 1024;
/// Requests in one batch at most.
pub const MAX_BATCH_REQUESTS: usize = 100;
/// The JSON-RPC error code of a development method (`localnet_*`) asked for by a web page.
pub const DEV_METHOD_FROM_BROWSER: i64 = -32090;
const DEV_METHOD_PREFIX: &str = "localnet_";

/// What the handlers share: the node, and the latency each exchange is given.
#[derive(Clone)]
pub struct Served {
    node: Node,
    latency: RpcLatency,
    seed: u64,
    exchanges: Arc<AtomicU64>,
}

/// The JSON-RPC endpoint; each exchange takes `latency` (half before the node sees the request,
/// half after it answers, as the two ways of a network would), its jitter drawn from `seed`.
pub fn router(node: Node, latency: RpcLatency, seed: u64) -> Router {
    let served = Served {
        node,
        latency,
        seed,
        exchanges: Arc::new(AtomicU64::new(0)),
    };
    Router::new()
        .route("/", post(handle).get(health))
        .route("/health", axum::routing::get(health))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BODY_BYTES))
        .layer(middleware::from_fn(cors))
        .with_state(served)
}

/// Any web page may call the node's standard methods, as a cluster's public RPC allows: a
/// dashboard reads accounts and sends the transactions its wallet signed straight to the chain.
/// The preflight allows whatever headers it is asked for (web3.js adds its own `solana-client`).
/// The `localnet_*` development methods are refused to pages (`answer`).
async fn cors(request: Request, next: Next) -> Response {
    let any = HeaderValue::from_static("*");
    if request.method() == Method::OPTIONS {
        let asked = request
            .headers()
            .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .cloned()
            .unwrap_or_else(|| HeaderValue::from_static("content-type"));
        return (
            StatusCode::NO_CONTENT,
            [
                (header::ACCESS_CONTROL_ALLOW_ORIGIN, any),
                (
                    header::ACCESS_CONTROL_ALLOW_METHODS,
                    HeaderValue::from_static("GET, POST, OPTIONS"),
                ),
                (header::ACCESS_CONTROL_ALLOW_HEADERS, asked),
                (header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400")),
            ],
        )
            .into_response();
    }
    let mut response = next.run(request).await;
    response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, any);
    response
}

async fn health() -> &'static str {
    "ok"
}

fn error_response(id: Value, error: &rpc::RpcError) -> Value {
    let mut body = json!({ "code": error.code, "message": error.message });
    if let Some(data) = &error.data {
        body["data"] = data.clone();
    }
    json!({ "jsonrpc": "2.0", "error": body, "id": id })
}

/// One request object, already validated, or the error to answer it with.
enum Call {
    Method {
        id: Option<Value>,
        method: String,
        params: Value,
    },
    Invalid {
        id: Value,
        error: rpc::RpcError,
    },
}

fn parse_call(request: Value) -> Call {
    let Value::Object(mut object) = request else {
        return Call::Invalid {
            id: Value::Null,
            error: rpc::RpcError::invalid_request("expected an object"),
        };
    };
    let id = object.remove("id");
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Call::Invalid {
            id: id.unwrap_or(Value::Null),
            error: rpc::RpcError::invalid_request("jsonrpc must be \"2.0\""),
        };
    }
    let Some(Value::String(method)) = object.remove("method") else {
        return Call::Invalid {
            id: id.unwrap_or(Value::Null),
            error: rpc::RpcError::invalid_request("method must be a string"),
        };
    };
    Call::Method {
        id,
        method,
        params: object.remove("params").unwrap_or(Value::Null),
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

async fn handle(State(served): State<Served>, headers: HeaderMap, body: Bytes) -> Response {
    // Browsers send `Origin` with every POST, and no page is served from the node's own origin;
    // scripts, the CLI and the relayer send none.
    let from_browser = headers.contains_key(header::ORIGIN);
    if served.latency.is_zero() {
        return answer(&served.node, body, from_browser).await;
    }
    let nth = served.exchanges.fetch_add(1, Ordering::Relaxed);
    let delay = served.latency.delay(served.seed, nth);
    tokio::time::sleep(delay / 2).await;
    let response = answer(&served.node, body, from_browser).await;
    tokio::time::sleep(delay - delay / 2).await;
    response
}

/// The development methods mint USDC, move the clock and drop transactions for every user of the
/// node; the dashboard calls none of them (its relayer relays standard methods only), so no web
/// page, which any site a developer visits could be, may call them.
fn refuse_dev_method_from_browser(method: &str) -> rpc::RpcError {
    rpc::RpcError::new(
        DEV_METHOD_FROM_BROWSER,
        format!(
            "{method} is a development method and is not served to web pages (the request has an Origin \
             header); call it from a script or the CLI"
        ),
    )
}

async fn answer(node: &Node, body: Bytes, from_browser: bool) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return json_response(
            StatusCode::OK,
            &error_response(Value::Null, &rpc::RpcError::parse_error()),
        );
    };
    let (calls, batch) = match request {
        Value::Array(requests) if requests.is_empty() => {
            let error = rpc::RpcError::invalid_request("empty batch");
            return json_response(StatusCode::OK, &error_response(Value::Null, &error));
        }
        Value::Array(requests) if requests.len() > MAX_BATCH_REQUESTS => {
            let error = rpc::RpcError::invalid_request(&format!("at most {MAX_BATCH_REQUESTS} requests in a batch"));
            return json_response(StatusCode::OK, &error_response(Value::Null, &error));
        }
        Value::Array(requests) => (requests.into_iter().map(parse_call).collect::<Vec<_>>(), true),
        single => (vec![parse_call(single)], false),
    };
    let answers: Vec<Value> = node
        .call(move |state| {
            calls
                .into_iter()
                .filter_map(|call| match call {
                    Call::Invalid { id, error } => Some(error_response(id, &error)),
                    Call::Method { id, method, params } => {
                        let result = if from_browser && method.starts_with(DEV_METHOD_PREFIX) {
                            Err(refuse_dev_method_from_browser(&method))
                        } else {
                            dev::dispatch(state, &method, &params)
                                .unwrap_or_else(|| rpc::dispatch(&mut state.ledger, &method, &params))
                        };
                        // A request without an id is a notification: it gets no answer.
                        let id = id?;
                        Some(match result {
                            Ok(result) => {
                                // Moved in rather than through `json!`, which would copy it.
                                let mut answer = json!({ "jsonrpc": "2.0", "id": id });
                                answer["result"] = result;
                                answer
                            }
                            Err(error) => error_response(id, &error),
                        })
                    }
                })
                .collect()
        })
        .await;
    match (batch, answers.as_slice()) {
        (true, _) => json_response(StatusCode::OK, &Value::Array(answers)),
        (false, [answer]) => json_response(StatusCode::OK, answer),
        (false, _) => StatusCode::NO_CONTENT.into_response(),
    }
}
