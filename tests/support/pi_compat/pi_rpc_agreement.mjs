#!/usr/bin/env node
// pi 1.6's own RpcClient (dist/modes/rpc/rpc-client.js) on what must agree with pi's RPC types:
//
//   AGENT_TUI_PYTHON=python node pi_rpc_agreement.mjs SESSION_FILE [agent-tui args...]
//
// Reads the thinking levels, sets "high", reads the state, the session stats and the models
// (through the client's typed methods), then prompts once, answering every permission question
// (pi's extension_ui_request) with "Allow once" on the agent's stdin, as a client of pi's
// extension UI does (RpcClient has no method for it), reads the stats and the state again and
// cycles the thinking level. Prints one JSON object: {levels, afterHigh, statsBefore, models,
// events, questions, statsAfter, stateAfter, cycled} (or {error} and exit 1). PI_DIR overrides
// where pi is installed.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const piDir = resolve(process.env.PI_DIR ?? join(here, "..", "..", "..", "bench", "pi"));
const rpc = join(piDir, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "modes", "rpc");
const { RpcClient } = await import(pathToFileURL(join(rpc, "rpc-client.js")).href);

const [session, ...extra] = process.argv.slice(2);
const client = new RpcClient({ cliPath: join(here, "agent_tui_cli.mjs"), args: ["--session", session, ...extra] });
const questions = [];
client.onEvent((event) => {
	if (event.type !== "extension_ui_request") return;
	questions.push(event);
	const answer = { type: "extension_ui_response", id: event.id, value: "Allow once" };
	client.process.stdin.write(JSON.stringify(answer) + "\n");
});
try {
	await client.start();
	const out = { levels: await client.getAvailableThinkingLevels() };
	await client.setThinkingLevel("high");
	out.afterHigh = await client.getState();
	out.statsBefore = await client.getSessionStats();
	out.models = await client.getAvailableModels();
	out.events = await client.promptAndWait("run it", undefined, 60000);
	out.questions = questions;
	out.statsAfter = await client.getSessionStats();
	out.stateAfter = await client.getState();
	out.cycled = await client.cycleThinkingLevel();
	await client.stop();
	process.stdout.write(JSON.stringify(out) + "\n");
} catch (error) {
	await client.stop();
	process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
	process.exit(1);
}
