#!/usr/bin/env node
// pi 1.6 reading session files agent-tui wrote: for each FILE, what pi's SessionManager makes of it.
//
//   node pi_read.mjs FILE...   prints [{id, cwd, parentSession, name, leafId, entryCount, ids,
//                              labels, messages} | {error}, ...] as JSON, one per file
//
// messages is convertToLlm(buildSessionProjection().messages): what pi would send the model.
// Each file is copied to a temporary directory first (pi's open may migrate, i.e. rewrite, a
// file), and pi's core modules are imported by path (Node 20 cannot load pi's package index).

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const piDir = resolve(process.env.PI_DIR ?? join(here, "..", "..", "..", "bench", "pi"));
const core = join(piDir, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
const { SessionManager } = await import(pathToFileURL(join(core, "session-manager.js")).href);
const { convertToLlm } = await import(pathToFileURL(join(core, "messages.js")).href);

const tmp = mkdtempSync(join(tmpdir(), "pi-read-"));
const out = [];
try {
	for (const [n, file] of process.argv.slice(2).entries()) {
		try {
			const copy = join(tmp, `${n}-${basename(file)}`);
			copyFileSync(file, copy);
			const sm = SessionManager.open(copy, tmp);
			const header = sm.getHeader() ?? {};
			const entries = sm.getEntries();
			const labels = {};
			for (const e of entries) {
				const label = sm.getLabel(e.id);
				if (label !== undefined) labels[e.id] = label;
			}
			out.push({
				id: sm.getSessionId(),
				cwd: header.cwd,
				parentSession: header.parentSession ?? null,
				name: sm.getSessionName() ?? null,
				leafId: sm.getLeafId(),
				entryCount: sm.getEntryCount(),
				ids: entries.map((e) => e.id),
				labels,
				messages: convertToLlm(sm.buildSessionProjection().messages),
			});
		} catch (error) {
			out.push({ error: String(error?.message ?? error) });
		}
	}
} finally {
	rmSync(tmp, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(out));
