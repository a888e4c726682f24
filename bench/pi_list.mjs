// pi's session listing, as `agent-tui sessions --all` prints ours: SessionManager.listAll over
// $PI_CODING_AGENT_DIR/sessions (a folder per cwd), which reads every file (pi keeps no index).
// Imports pi's files directly (its package index needs Node 22; these run on Node 20).
import { SessionManager } from "./pi/node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";

const sessions = await SessionManager.listAll();
for (const s of sessions) {
	process.stdout.write(`${s.modified.toISOString()}  ${s.messageCount}  ${s.path}\n`);
}
