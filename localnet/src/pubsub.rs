//! Solana PubSub over WebSocket: signature, logs, account and slot subscriptions.
//!
//! The registry lives on the chain thread beside the ledger and turns its events into
//! notifications, each at the commitment its subscriber asked for: `processed` when the
//! transaction runs, `confirmed` one slot later, `finalized` 32 slots later.

use {
    crate::{
        ledger::{Commitment, Ledger, LedgerEvent, FINALIZATION_DEPTH},
        node::Node,
        rpc::{self, Params, RpcError},
    },
    axum::{
        extract::{
            ws::{Message, WebSocket, WebSocketUpgrade},
            State,
        },
        response::Response,
        routing::get,
        Router,
    },
    futures_util::{SinkExt, StreamExt},
    serde_json::{json, Value},
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    std::{
        collections::{HashMap, VecDeque},
        sync::atomic::{AtomicU64, Ordering},
    },
    tokio::sync::mpsc::{unbounded_channel, UnboundedSender},
};

/// Subscriptions one connection may hold at once.
pub const MAX_SUBSCRIPTIONS_PER_CONNECTION: usize = 1_000;
/// Largest message a client may send.
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

enum Kind {
    Signature(Signature),
    Logs(Option<Pubkey>),
    Account { address: Pubkey, encoding: rpc::Encoding },
    Slot,
}

struct Entry {
    connection: u64,
    sink: UnboundedSender<String>,
    kind: Kind,
    commitment: Commitment,
}

/// A processed transaction, kept until every commitment level has seen it.
struct Notice {
    signature: Signature,
    slot: u64,
    writable: Vec<Pubkey>,
}

#[derive(Default)]
pub struct Subscriptions {
    next_id: u64,
    entries: HashMap<u64, Entry>,
    per_connection: HashMap<u64, usize>,
    recent: VecDeque<Notice>,
}

fn notification(method: &str, subscription: u64, result: Value) -> String {
    json!({ "jsonrpc": "2.0", "method": method, "params": { "result": result, "subscription": subscription } })
        .to_string()
}

fn context(slot: u64, value: Value) -> Value {
    json!({ "context": { "slot": slot }, "value": value })
}

impl Subscriptions {
    pub fn subscribe(
        &mut self,
        ledger: &Ledger,
        connection: u64,
        sink: UnboundedSender<String>,
        method: &str,
        params: &Value,
    ) -> Result<Value, RpcError> {
        let params = Params::new(params)?;
        let (kind, commitment) = match method {
            "signatureSubscribe" => (Kind::Signature(params.parse(0, "signature")?), params.commitment(1)?),
            "logsSubscribe" => {
                let filter = match params.get(0) {
                    Some(Value::String(all)) if all == "all" || all == "allWithVotes" => None,
                    Some(Value::Object(filter)) => {
                        let mentions = filter
                            .get("mentions")
                            .and_then(Value::as_array)
                            .filter(|mentions| mentions.len() == 1);
                        let address = mentions
                            .and_then(|mentions| mentions[0].as_str())
                            .and_then(|text| text.parse().ok())
                            .ok_or_else(|| RpcError::invalid_params("mentions takes exactly one address"))?;
                        Some(address)
                    }
                    _ => {
                        return Err(RpcError::invalid_params(
                            "expected \"all\" or {\"mentions\": [address]}",
                        ))
                    }
                };
                (Kind::Logs(filter), params.commitment(1)?)
            }
            "accountSubscribe" => {
                let address = params.pubkey(0)?;
                let encoding = rpc::Encoding::from_config(&params.config(1)?)?;
                (Kind::Account { address, encoding }, params.commitment(1)?)
            }
            "slotSubscribe" => (Kind::Slot, Commitment::Processed),
            _ => return Err(RpcError::method_not_found()),
        };
        if self.per_connection.get(&connection).copied().unwrap_or(0) >= MAX_SUBSCRIPTIONS_PER_CONNECTION {
            return Err(RpcError::new(
                -32603,
                format!("too many subscriptions on this connection (at most {MAX_SUBSCRIPTIONS_PER_CONNECTION})"),
            ));
        }
        self.next_id += 1;
        let id = self.next_id;
        // A transaction that already reached the commitment is answered at once.
        if let Kind::Signature(signature) = &kind {
            if let Some(summary) = ledger.transaction_summary(signature) {
                if summary.slot <= ledger.slot_at(commitment) {
                    let value = context(
                        summary.slot,
                        json!({ "err": summary.err.as_deref().map(rpc::transaction_error) }),
                    );
                    let _ = sink.send(notification("signatureNotification", id, value));
                    return Ok(json!(id));
                }
            }
        }
        self.entries.insert(
            id,
            Entry {
                connection,
                sink,
                kind,
                commitment,
            },
        );
        *self.per_connection.entry(connection).or_default() += 1;
        Ok(json!(id))
    }

    pub fn unsubscribe(&mut self, connection: u64, params: &Value) -> Result<Value, RpcError> {
        let id = Params::new(params)?.u64(0, "subscription id")?;
        match self.entries.get(&id) {
            Some(entry) if entry.connection == connection => {
                self.remove(id);
                Ok(json!(true))
            }
            _ => Err(RpcError::invalid_params("Invalid subscription id.")),
        }
    }

    fn remove(&mut self, id: u64) {
        if let Some(entry) = self.entries.remove(&id) {
            if let Some(count) = self.per_connection.get_mut(&entry.connection) {
                *count -= 1;
            }
        }
    }

    pub fn drop_connection(&mut self, connection: u64) {
        self.entries.retain(|_, entry| entry.connection != connection);
        self.per_connection.remove(&connection);
    }

    /// Sends what `events` mean to every subscriber whose commitment they reach.
    pub fn publish(&mut self, ledger: &Ledger, events: Vec<LedgerEvent>) {
        for event in events {
            match event {
                LedgerEvent::Processed {
                    signature,
                    slot,
                    writable,
                } => {
                    let notice = Notice {
                        signature,
                        slot,
                        writable,
                    };
                    self.notify_transaction(ledger, &notice, Commitment::Processed);
                    self.recent.push_back(notice);
                }
                LedgerEvent::Slot { slot } => {
                    self.notify_slot(slot);
                    self.notify_slot_reached(ledger, slot.saturating_sub(1), Commitment::Confirmed);
                    if slot >= FINALIZATION_DEPTH {
                        self.notify_slot_reached(ledger, slot - FINALIZATION_DEPTH, Commitment::Finalized);
                    }
                    while self
                        .recent
                        .front()
                        .is_some_and(|notice| notice.slot + FINALIZATION_DEPTH <= slot)
                    {
                        self.recent.pop_front();
                    }
                }
            }
        }
    }

    fn notify_slot_reached(&mut self, ledger: &Ledger, slot: u64, commitment: Commitment) {
        let recent = std::mem::take(&mut self.recent);
        for notice in recent.iter().filter(|notice| notice.slot == slot) {
            self.notify_transaction(ledger, notice, commitment);
        }
        self.recent = recent;
    }

    fn notify_slot(&mut self, slot: u64) {
        let value =
            json!({ "parent": slot.saturating_sub(1), "root": slot.saturating_sub(FINALIZATION_DEPTH), "slot": slot });
        let ended: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, entry)| matches!(entry.kind, Kind::Slot))
            .filter(|(id, entry)| {
                entry
                    .sink
                    .send(notification("slotNotification", **id, value.clone()))
                    .is_err()
            })
            .map(|(id, _)| *id)
            .collect();
        ended.into_iter().for_each(|id| self.remove(id));
    }

    fn notify_transaction(&mut self, ledger: &Ledger, notice: &Notice, commitment: Commitment) {
        if !self.entries.values().any(|entry| entry.commitment == commitment) {
            return;
        }
        let Some(summary) = ledger.transaction_summary(&notice.signature) else {
            return;
        };
        let err = summary.err.as_deref().map(rpc::transaction_error);
        // Only a logs subscription needs the record, read from disk once for all of them.
        let wants_record = self
            .entries
            .values()
            .any(|entry| entry.commitment == commitment && matches!(entry.kind, Kind::Logs(_)));
        let record = match wants_record.then(|| ledger.transaction(&notice.signature)) {
            Some(Ok(Some(record))) => Some(record),
            Some(Ok(None)) | None => None,
            Some(Err(err)) => {
                eprintln!(
                    "localnet: cannot read transaction {} for logs subscribers: {err}",
                    notice.signature
                );
                None
            }
        };
        let mut ended = Vec::new();
        for (id, entry) in self.entries.iter().filter(|(_, entry)| entry.commitment == commitment) {
            let id = *id;
            let sent = match &entry.kind {
                Kind::Signature(signature) if *signature == notice.signature => {
                    let _ = entry.sink.send(notification(
                        "signatureNotification",
                        id,
                        context(notice.slot, json!({ "err": err })),
                    ));
                    // A signature subscription ends with its notification.
                    ended.push(id);
                    continue;
                }
                Kind::Logs(filter) => {
                    let Some(record) = &record else {
                        continue;
                    };
                    if filter.is_some_and(|address| !record.account_keys().contains(&address)) {
                        continue;
                    }
                    let value = json!({ "signature": notice.signature.to_string(), "err": err, "logs": record.logs });
                    entry
                        .sink
                        .send(notification("logsNotification", id, context(notice.slot, value)))
                }
                Kind::Account { address, encoding } if notice.writable.contains(address) => {
                    let account = ledger.account(address).unwrap_or_default();
                    let value = rpc::encode_account_value(ledger, &account, *encoding);
                    entry
                        .sink
                        .send(notification("accountNotification", id, context(notice.slot, value)))
                }
                _ => Ok(()),
            };
            if sent.is_err() {
                ended.push(id);
            }
        }
        ended.into_iter().for_each(|id| self.remove(id));
    }
}

pub fn router(node: Node) -> Router {
    Router::new().route("/", get(upgrade)).with_state(node)
}

async fn upgrade(ws: WebSocketUpgrade, State(node): State<Node>) -> Response {
    ws.max_message_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| serve(socket, node))
}

static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

async fn serve(socket: WebSocket, node: Node) {
    let connection = NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed);
    let (notifications, mut queued) = unbounded_channel::<String>();
    let (mut outgoing, mut incoming) = socket.split();
    loop {
        tokio::select! {
            message = incoming.next() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text.to_string(),
                    Some(Ok(Message::Binary(bytes))) => String::from_utf8_lossy(&bytes).into_owned(),
                    // Reading on lets the socket send the Close reply it queued; dropping it
                    // here would end the connection without the closing handshake.
                    Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Close(_))) => continue,
                    _ => break,
                };
                let answer = answer(&node, connection, notifications.clone(), text).await;
                if outgoing.send(Message::Text(answer.into())).await.is_err() {
                    break;
                }
            }
            Some(note) = queued.recv() => {
                if outgoing.send(Message::Text(note.into())).await.is_err() {
                    break;
                }
            }
        }
    }
    node.call(move |state| state.pubsub.drop_connection(connection)).await;
}

async fn answer(node: &Node, connection: u64, sink: UnboundedSender<String>, text: String) -> String {
    let respond = |id: Value, result: Result<Value, RpcError>| match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "result": result, "id": id }).to_string(),
        Err(error) => {
            json!({ "jsonrpc": "2.0", "error": { "code": error.code, "message": error.message }, "id": id }).to_string()
        }
    };
    let Ok(Value::Object(mut request)) = serde_json::from_str::<Value>(&text) else {
        return respond(Value::Null, Err(RpcError::parse_error()));
    };
    let id = request.remove("id").unwrap_or(Value::Null);
    let Some(Value::String(method)) = request.remove("method") else {
        return respond(id, Err(RpcError::invalid_request("method must be a string")));
    };
    let params = request.remove("params").unwrap_or(Value::Null);
    let result = node
        .call(move |state| {
            if method.ends_with("Unsubscribe") {
                state.pubsub.unsubscribe(connection, &params)
            } else {
                state
                    .pubsub
                    .subscribe(&state.ledger, connection, sink, &method, &params)
            }
        })
        .await;
    respond(id, result)
}
