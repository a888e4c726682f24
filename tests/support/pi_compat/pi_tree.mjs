#!/usr/bin/env node
// pi's tree of a session file, as its RPC get_tree answers: {tree: getTree(), leafId: getLeafId()}.
//
//   node pi_tree.mjs FILE
//
// As pi_project.mjs: pi opens a copy of the file (it rewrites files it migrates), and its core
// module is imported by path (Node 20 cannot load pi's package index). PI_DIR overrides where pi is.

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const piDir = resolve(process.env.PI_DIR ?? join(here, "..", "..", "..", "bench", "pi"));
const core = join(piDir, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
const { SessionManager } = await import(pathToFileURL(join(core, "session-manager.js")).href);

const tmp = mkdtempSync(join(tmpdir(), "pi-tree-"));
try {
	const copy = join(tmp, basename(process.argv[2]));
	copyFileSync(process.argv[2], copy);
	const sm = SessionManager.open(copy, tmp);
	process.stdout.write(JSON.stringify({ tree: sm.getTree(), leafId: sm.getLeafId() }));
} finally {
	rmSync(tmp, { recursive: true, force: true });
}
