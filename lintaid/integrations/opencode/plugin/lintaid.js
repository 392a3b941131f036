// lintaid for OpenCode: the project's state when a session starts and the memories that match
// each prompt, both as system context; the finished turn captured when the session goes idle.
//
// Each hook spawns lintaid's hook shim (`<hookCommand...> opencode <event>`) with one JSON
// object on stdin and reads one JSON object back ({"additionalContext": "..."} or {}). The
// shim answers within its own budget and prints {} when the daemon is away; this plugin also
// kills it after timeoutMs and swallows every error (memory is best effort, the session is
// not). `lintaid install opencode` writes this file with SETTINGS filled in; uninstall removes
// it. The context goes into the system prompt, never into the person's message, so it is
// never read back as something they asked.
import { spawn } from "node:child_process";

const SETTINGS = {"hookCommand": ["lintaid-hook"], "project": null, "timeoutMs": 5000};
const CLIENT = "opencode";
const MAX_MESSAGES = 40;
const MAX_TEXT = 32 * 1024;
const PATH_KEYS = ["filePath", "path", "file_path"];

function clip(text) {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}

// Run the shim once; resolve to its JSON answer, or null on any failure or timeout.
function callShim(name, payload, cwd) {
  return new Promise((resolve) => {
    const command = SETTINGS.hookCommand;
    const env = { ...process.env };
    if (SETTINGS.project) env.LINTAID_PROJECT = SETTINGS.project;
    let child;
    try {
      child = spawn(command[0], [...command.slice(1), CLIENT, name],
        { cwd, env, stdio: ["pipe", "pipe", "ignore"], windowsHide: true });
    } catch {
      resolve(null);
      return;
    }
    let out = "";
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      try { child.kill("SIGKILL"); } catch { /* gone already */ }
      finish(null);
    }, SETTINGS.timeoutMs);
    child.on("error", () => finish(null));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("close", () => {
      try {
        const answer = JSON.parse(out);
        finish(answer && typeof answer === "object" ? answer : null);
      } catch {
        finish(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function context(answer) {
  const text = answer && answer.additionalContext;
  return typeof text === "string" && text.trim() ? text : null;
}

// An OpenCode message ({info, parts}) as lintaid reads it: role, text, tool calls with the
// files they name. Synthetic parts (OpenCode's own notes) are not the person's words.
function slim(entry) {
  const info = (entry && entry.info) || {};
  if (info.role !== "user" && info.role !== "assistant") return null;
  const content = [];
  for (const part of entry.parts || []) {
    if (!part || typeof part !== "object") continue;
    if (part.type === "text" && typeof part.text === "string" && !part.synthetic && !part.ignored) {
      content.push({ type: "text", text: clip(part.text) });
    } else if (part.type === "tool" && typeof part.tool === "string") {
      const input = (part.state && part.state.input) || {};
      const kept = {};
      for (const key of PATH_KEYS) {
        if (typeof input[key] === "string") kept[key] = clip(input[key]);
      }
      content.push({ type: "toolCall", name: part.tool, arguments: kept });
    }
  }
  return { role: info.role, id: typeof info.id === "string" ? info.id : null, content };
}

export const LintaidPlugin = async ({ client, directory }) => {
  const cwd = SETTINGS.project || directory;
  const sessions = new Map(); // sessionID -> what to add to its system prompt
  const payload = (name, id, extra) => ({ hook_event_name: name, session_id: id, cwd, ...extra });
  return {
    "chat.message": async (input, output) => {
      try {
        const id = input && input.sessionID;
        if (!id) return;
        let session = sessions.get(id);
        if (!session) {
          session = { state: null, recall: null };
          sessions.set(id, session);
          session.state = context(await callShim("session.start",
            payload("session.start", id, { source: "startup" }), cwd));
        }
        session.recall = null;
        const parts = (output && output.parts) || [];
        const prompt = parts.filter((p) => p && p.type === "text" && !p.synthetic
          && typeof p.text === "string").map((p) => p.text).join("\n");
        if (!prompt.trim()) return;
        session.recall = context(await callShim("chat.message", payload("chat.message", id, {
          prompt: clip(prompt), message_id: (output.message && output.message.id) || null }), cwd));
      } catch { /* memory is best effort */ }
    },
    "experimental.chat.system.transform": async (input, output) => {
      const session = input && input.sessionID ? sessions.get(input.sessionID) : null;
      if (!session || !output || !Array.isArray(output.system)) return;
      for (const text of [session.state, session.recall]) if (text) output.system.push(text);
    },
    event: async ({ event }) => {
      try {
        if (!event || (event.type !== "session.idle" && event.type !== "session.compacted")) {
          return;
        }
        const id = event.properties && event.properties.sessionID;
        if (!id) return;
        let messages = [];
        const answer = await client.session.messages({ path: { id } });
        const list = Array.isArray(answer) ? answer : answer && answer.data;
        if (Array.isArray(list)) messages = list.slice(-MAX_MESSAGES).map(slim).filter(Boolean);
        await callShim(event.type, payload(event.type, id, { messages }), cwd);
      } catch { /* memory is best effort */ }
    },
  };
};
