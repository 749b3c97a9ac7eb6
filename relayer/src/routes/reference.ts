import { ERROR_CODES } from "../errors.js";
import type { RouteApp } from "../http/route-app.js";

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, unknown>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: unknown; description?: string }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const json = (value: unknown) => `<pre>${escape(JSON.stringify(value, null, 2))}</pre>`;

function renderOperation(method: string, path: string, op: Operation): string {
  const auth = op.security?.map((s) => Object.keys(s).join(", ")).join(" or ") || "none";
  const params = (op.parameters ?? [])
    .map(
      (p) =>
        `<tr><td><code>${escape(p.name)}</code></td><td>${escape(p.in)}</td><td>${p.required ? "yes" : "no"}</td>` +
        `<td><code>${escape(JSON.stringify(p.schema ?? {}))}</code></td></tr>`,
    )
    .join("");
  const body = op.requestBody?.content?.["application/json"]?.schema;
  const ok = Object.entries(op.responses ?? {}).find(([status]) => status.startsWith("2"));
  const errors = Object.keys(op.responses ?? {}).filter((status) => !status.startsWith("2"));
  const anchor = `${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, "-");
  return `<section id="${anchor}">
<h3><span class="method">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>
<p><strong>${escape(op.summary ?? "")}</strong></p>
${op.description ? `<p>${escape(op.description)}</p>` : ""}
<p>Authentication: ${escape(auth)}</p>
${params ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th></tr>${params}</table>` : ""}
${body ? `<details><summary>Request body</summary>${json(body)}</details>` : ""}
${ok ? `<details><summary>${ok[0]} response</summary>${json(ok[1].content?.["application/json"]?.schema ?? {})}</details>` : ""}
<p>Error statuses: ${errors.join(", ") || "none"}</p>
</section>`;
}

/** GET /v1/reference: a readable API reference rendered from the same OpenAPI document. */
export function registerReference(app: RouteApp): void {
  app.get("/v1/reference", { schema: { hide: true } }, async (_request, reply) => {
    const doc = app.swagger() as unknown as {
      info: { title: string; description?: string };
      paths: Record<string, Record<string, Operation>>;
    };
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ method, path, op })),
    );
    const toc = operations
      .map(({ method, path, op }) => {
        const anchor = `${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, "-");
        return `<li><a href="#${anchor}">${method.toUpperCase()} ${escape(path)}</a>: ${escape(op.summary ?? "")}</li>`;
      })
      .join("");
    const errorRows = Object.entries(ERROR_CODES)
      .map(
        ([code, spec]) =>
          `<tr><td><code>${code}</code></td><td>${spec.status}</td><td>${spec.type}</td><td>${escape(spec.description)}</td></tr>`,
      )
      .join("");
    reply.type("text/html; charset=utf-8");
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
pre{background:#f4f4f4;padding:.75rem;overflow:auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}
.method{background:#222;color:#fff;padding:0 .4rem;border-radius:3px}section{border-top:1px solid #ddd;margin-top:1.5rem}</style></head>
<body><h1>${escape(doc.info.title)}</h1><p>${escape(doc.info.description ?? "")}</p>
<p>Machine-readable: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1).</p>
<h2>Endpoints</h2><ul>${toc}</ul>
${operations.map(({ method, path, op }) => renderOperation(method, path, op)).join("\n")}
<h2>Errors</h2><p>Every error answers <code>{"error":{"type","code","message","param"?,"request_id"}}</code>; branch on <code>code</code>.</p>
<table><tr><th>code</th><th>status</th><th>type</th><th>when</th></tr>${errorRows}</table>
</body></html>`;
  });
}
