// Drive lintaid's HTTP API with Node's own fetch, as a JavaScript agent would.
//
// stdin: {"base": "http://127.0.0.1:PORT", "token": "..."}. stdout: one JSON object with
// each step's HTTP status and parsed body, for the Python test to judge.
let raw = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) raw += chunk;
const { base, token } = JSON.parse(raw);

async function call(method, path, body, headers = {}) {
  const init = { method, headers: { Authorization: `Bearer ${token}`, ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers["Content-Type"] ??= "application/json";
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { json = text; }
  return { status: res.status, body: json, retryAfter: res.headers.get("retry-after"),
    replayed: res.headers.get("idempotent-replayed") };
}

const out = {};
out.add = await call("POST", "/memories", {
  messages: [{ role: "user", content: "The payments service retries webhooks 5 times." }],
  user_id: "node", metadata: { from: "node" } });
const id = out.add.body.results[0].id;
out.search = await call("POST", "/search", { query: "webhooks retries", user_id: "node",
  limit: 3 });
out.get = await call("GET", `/memories/${encodeURIComponent(id)}?user_id=node`);
out.list = await call("GET", "/memories?user_id=node&limit=5");
out.update = await call("PUT", `/memories/${id}`, {
  text: "The payments service retries webhooks 7 times.", user_id: "node" });
out.searchAfter = await call("POST", "/ops/search", { query: "webhooks", user_id: "node" });
out.history = await call("GET", `/memories/${id}/history?user_id=node`);
out.delete = await call("DELETE", `/memories/${id}?user_id=node&reason=wrong`);
out.gone = await call("GET", `/memories/${id}?user_id=node`);
out.restore = await call("POST", "/ops/restore", { id, user_id: "node" });
out.openapi = await call("GET", "/openapi.json");
out.noToken = await (async () => {
  const res = await fetch(base + "/memories", { method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ messages: "no token, so never stored", user_id: "node" }) });
  return { status: res.status, body: await res.json(),
    authenticate: res.headers.get("www-authenticate") };
})();
out.wrongType = await call("POST", "/search", { query: "webhooks", top_k: "3",
  user_id: "node" });
out.wrongContent = await call("POST", "/memories", { messages: 42, user_id: "node" });
out.notJson = await call("POST", "/ops/add", "{not json", {});
out.unknownArg = await call("POST", "/ops/add", { content: "x", colour: "blue" });
out.listAtEnd = await call("GET", "/memories?user_id=node");
process.stdout.write(JSON.stringify(out));
