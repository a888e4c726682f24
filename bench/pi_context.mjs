// pi's view of a session's context, as `agent-tui context FILE --format json` prints ours:
// open the file with pi's SessionManager, project the active branch, convert to model roles.
// Imports pi's files directly (its package index needs Node 22; these run on Node 20).
import { convertToLlm } from "./pi/node_modules/@earendil-works/pi-coding-agent/dist/core/messages.js";
import { SessionManager } from "./pi/node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";

const file = process.argv[2];
if (!file) {
	process.stderr.write("usage: node pi_context.mjs SESSION.jsonl\n");
	process.exit(2);
}
const sm = SessionManager.open(file);
process.stdout.write(JSON.stringify(convertToLlm(sm.buildSessionProjection().messages)));
