// Load lintaid's OpenClaw plugin into a fake OpenClaw host and call its hooks.
//
// stdin: {"plugin": "/abs/index.js", "config": {...pluginConfig}, "calls": [{"hook", "event",
// "ctx"}]}. stdout: {"registered": [hook names], "results": [{"hook", "value", "ms"}]}.
import { pathToFileURL } from "node:url";

let raw = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) raw += chunk;
const input = JSON.parse(raw);

const mod = await import(pathToFileURL(input.plugin).href);
const plugin = mod.default;
const handlers = {};
const api = {
  id: "lintaid",
  pluginConfig: input.config,
  logger: { debug() {}, info() {}, warn() {}, error() {} },
  on(name, handler) { handlers[name] = handler; },
};
if (typeof plugin.register === "function") plugin.register(api);
else plugin(api);

const results = [];
for (const call of input.calls) {
  const started = Date.now();
  const value = await handlers[call.hook](call.event, call.ctx);
  results.push({ hook: call.hook, value: value === undefined ? null : value,
    ms: Date.now() - started });
}
process.stdout.write(JSON.stringify({
  registered: Object.keys(handlers).sort(),
  id: plugin.id,
  results,
}));
