// pi's open + project in process, timed as bench/sidecar_bench.py times ours: SessionManager.open,
// buildSessionProjection().messages, convertToLlm; RUNS times in one process (the first is cold).
// Prints {"ms": [...], "messages": N} on stdout.
import { convertToLlm } from "./pi/node_modules/@earendil-works/pi-coding-agent/dist/core/messages.js";
import { SessionManager } from "./pi/node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";

const file = process.argv[2];
const runs = Number(process.argv[3] || 5);
const ms = [];
let count = 0;
for (let i = 0; i < runs; i++) {
	const t0 = performance.now();
	const sm = SessionManager.open(file);
	const messages = convertToLlm(sm.buildSessionProjection().messages);
	ms.push(performance.now() - t0);
	count = messages.length;
}
process.stdout.write(JSON.stringify({ ms, messages: count }));
