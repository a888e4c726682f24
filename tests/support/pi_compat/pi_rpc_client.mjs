#!/usr/bin/env node
// pi 1.6's own RpcClient (dist/modes/rpc/rpc-client.js) driving `agent-tui --mode rpc`.
//
//   AGENT_TUI_PYTHON=python node pi_rpc_client.mjs SESSION_FILE
//
// Prompts twice (the second after a `bash`), reads the state, the messages, the last reply, the
// tree, the fork messages, the models and the commands through the client's typed methods, cycles
// the model, exports the page, clones the session, then stops it (SIGTERM). Prints one JSON
// object: {events: [[...], [...]], state, messages, lastText, bash, tree, forkMessages, models,
// commands, cycled, html, cloned, clonedState} (or {error} and exit 1).
// Node 20 cannot load pi's package index, so the client is imported by path. PI_DIR overrides
// where pi is installed.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const piDir = resolve(process.env.PI_DIR ?? join(here, "..", "..", "..", "bench", "pi"));
const rpc = join(piDir, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "modes", "rpc");
const { RpcClient } = await import(pathToFileURL(join(rpc, "rpc-client.js")).href);

const client = new RpcClient({ cliPath: join(here, "agent_tui_cli.mjs"), args: ["--session", process.argv[2]] });
try {
	await client.start();
	const first = await client.promptAndWait("what is in a.txt?", undefined, 30000);
	const bash = await client.bash("echo from bash");
	const second = await client.promptAndWait("and now?", undefined, 30000);
	const out = {
		events: [first, second],
		state: await client.getState(),
		messages: await client.getMessages(),
		lastText: await client.getLastAssistantText(),
		bash,
		tree: await client.getTree(),
		forkMessages: await client.getForkMessages(),
		models: await client.getAvailableModels(),
		commands: await client.getCommands(),
		cycled: await client.cycleModel(),
		html: await client.exportHtml(),
		cloned: await client.clone(),
	};
	out.clonedState = await client.getState();
	await client.stop();
	process.stdout.write(JSON.stringify(out) + "\n");
} catch (error) {
	await client.stop();
	process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
	process.exit(1);
}
