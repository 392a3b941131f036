// lintaid for OpenClaw: recall while each agent run's prompt is built, capture after it.
//
// Each hook spawns lintaid's hook shim (`<hookCommand...> openclaw <event>`) with one JSON
// object on stdin and reads one JSON object back on stdout, exactly as command-hook clients
// do. The shim answers within its own budget and prints {} when the daemon is away, so a
// slow or missing lintaid never holds up the agent; this plugin also kills the shim after
// `timeoutMs` and swallows every error (memory is best effort, the agent's run is not).
//
// Configuration (plugins.entries.lintaid.config in openclaw.json, written by
// `lintaid install openclaw`): hookCommand (argv), project (optional), timeoutMs.

import { spawn } from "node:child_process";

const CLIENT = "openclaw";
const DEFAULT_TIMEOUT_MS = 5000;
const MAX_MESSAGES = 40;
const MAX_TEXT = 32 * 1024;
const CONTEXT_KEYS = ["prependContext", "appendContext", "prependSystemContext",
  "appendSystemContext"];
const PATH_KEYS = ["path", "file_path", "filePath", "file"];

function settings(api) {
  const config = (api && typeof api.pluginConfig === "object" && api.pluginConfig) || {};
  const command = Array.isArray(config.hookCommand)
    && config.hookCommand.length > 0
    && config.hookCommand.every((word) => typeof word === "string")
    ? config.hookCommand : ["lintaid-hook"];
  const project = typeof config.project === "string" && config.project ? config.project : null;
  const timeoutMs = Number.isInteger(config.timeoutMs) ? config.timeoutMs : DEFAULT_TIMEOUT_MS;
  return { command, project, timeoutMs };
}

function clip(text) {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}

// A message as lintaid reads it: role, text blocks, tool calls with the files they name.
function slim(message) {
  if (!message || typeof message !== "object") return null;
  const out = { role: String(message.role || "") };
  if (typeof message.customType === "string") out.customType = message.customType;
  if (message.details && message.details.runtimeContextCarrier) out.runtimeContextCarrier = true;
  const content = message.content;
  if (typeof content === "string") {
    out.content = clip(content);
  } else if (Array.isArray(content)) {
    out.content = [];
    for (const block of content) {
      if (!block || typeof block !== "object") continue;
      if (block.type === "text" && typeof block.text === "string") {
        out.content.push({ type: "text", text: clip(block.text) });
      } else if (block.type === "toolCall" || block.type === "tool_use") {
        const args = block.arguments || block.input || {};
        const kept = {};
        for (const key of PATH_KEYS) {
          if (typeof args[key] === "string") kept[key] = clip(args[key]);
        }
        out.content.push({ type: "toolCall", name: String(block.name || ""), arguments: kept });
      }
    }
  }
  return out;
}

function envelope(name, event, ctx, project) {
  const e = event || {};
  const c = ctx || {};
  const payload = {
    hook_event_name: name,
    session_id: c.sessionId || e.sessionId || null,
    session_key: c.sessionKey || e.sessionKey || null,
    run_id: e.runId || c.runId || null,
    agent_id: c.agentId || null,
    workspace_dir: c.workspaceDir || null,
  };
  const cwd = project || c.workspaceDir || null;
  if (cwd) payload.cwd = cwd;
  // The request as the person sent it, where the host says (`prompt` may hold reconstructed
  // history); an explicit "" means there is none.
  const prompt = typeof e.currentUserMessage === "string" ? e.currentUserMessage : e.prompt;
  if (typeof prompt === "string") payload.prompt = clip(prompt);
  if (Array.isArray(e.messages)) {
    payload.messages = e.messages.slice(-MAX_MESSAGES).map(slim).filter(Boolean);
  }
  if (typeof e.lastAssistantMessage === "string") {
    payload.last_assistant_message = clip(e.lastAssistantMessage);
  }
  if (typeof e.stopHookActive === "boolean") payload.stop_hook_active = e.stopHookActive;
  if (typeof e.success === "boolean") payload.success = e.success;
  if (typeof e.durationMs === "number") payload.duration_ms = e.durationMs;
  return payload;
}

// Run the shim once; resolve to its JSON answer, or null on any failure or timeout.
export function callShim(command, name, payload, { cwd, project, timeoutMs }) {
  return new Promise((resolve) => {
    let child;
    const env = { ...process.env };
    if (project) env.LINTAID_PROJECT = project;
    try {
      child = spawn(command[0], [...command.slice(1), CLIENT, name], {
        cwd: cwd || undefined, env, stdio: ["pipe", "pipe", "ignore"], windowsHide: true,
      });
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
    }, timeoutMs);
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
    child.stdin.on("error", () => { /* the shim may exit before reading everything */ });
    child.stdin.end(JSON.stringify(payload));
  });
}

function register(api) {
  const { command, project, timeoutMs } = settings(api);
  const log = (api && api.logger) || null;
  const run = async (name, event, ctx) => {
    const payload = envelope(name, event, ctx, project);
    const answer = await callShim(command, name, payload,
      { cwd: payload.cwd, project, timeoutMs });
    if (answer === null && log && typeof log.debug === "function") {
      log.debug(`lintaid: no answer from the hook shim for ${name}`);
    }
    return answer;
  };

  // OpenClaw builds the prompt (and rebuilds it on a retry) with before_prompt_build; the
  // older before_agent_start is no hook of current OpenClaw (2026.9), which never calls it.
  api.on("before_prompt_build", async (event, ctx) => {
    try {
      const answer = await run("before_prompt_build", event, ctx);
      if (!answer) return undefined;
      const result = {};
      for (const key of CONTEXT_KEYS) {
        if (typeof answer[key] === "string" && answer[key]) result[key] = answer[key];
      }
      return Object.keys(result).length ? result : undefined;
    } catch {
      return undefined;
    }
  });

  // OpenClaw awaits before_agent_finalize (it may ask for another pass), but not agent_end on
  // a one-shot run (`openclaw agent --local` exits without waiting for it): the finished turn
  // is captured on the first, and agent_end (the same run, so the same record) catches up a
  // run that ended some other way.
  api.on("before_agent_finalize", async (event, ctx) => {
    try {
      await run("before_agent_finalize", event, ctx);
    } catch {
      // capture is best effort
    }
    return undefined;
  });

  api.on("agent_end", async (event, ctx) => {
    try {
      await run("agent_end", event, ctx);
    } catch {
      // capture is best effort
    }
    return undefined;
  });
}

// Hosts load either a plugin object ({id, name, register}) or a register function; this
// default export is both.
function lintaid(api) {
  return register(api);
}
lintaid.id = "lintaid";
lintaid.register = register;
lintaid.description = "lintaid project memory: recall before each agent run, capture after it";

export default lintaid;
