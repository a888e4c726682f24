#!/usr/bin/env node
// pi's projection of a session file: convertToLlm(buildSessionProjection(...).messages) as JSON.
//
//   node pi_project.mjs FILE [LEAF]   print the message array of one file
//   node pi_project.mjs --batch       read [{file, leaf?, leafIndex?}, ...] as JSON on stdin and
//                                     print [{messages} | {error}, ...] in the same order
//
// A leaf is an entry id, or (leafIndex) the position of an entry in the file, for v1
// files whose ids pi makes up at random when it migrates them.
//
// pi's SessionManager.open rewrites v1/v2 files when it migrates them, so each
// file is copied to a temporary directory first and pi only ever sees the copy.
// Node 20 cannot load pi's package index (it needs Node 22), so the two core
// modules are imported by path. PI_DIR overrides where pi is installed.

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const piDir = resolve(process.env.PI_DIR ?? join(here, "..", "..", "..", "bench", "pi"));
const core = join(piDir, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core");
const { SessionManager, buildSessionProjection } = await import(
	pathToFileURL(join(core, "session-manager.js")).href
);
const { convertToLlm } = await import(pathToFileURL(join(core, "messages.js")).href);

const opened = new Map(); // file -> SessionManager of its copy: a batch projects a file at several leaves

function open(tmp, file) {
	let sm = opened.get(file);
	if (sm === undefined) {
		const copy = join(tmp, `${opened.size}-${basename(file)}`);
		copyFileSync(file, copy);
		sm = SessionManager.open(copy, tmp);
		opened.set(file, sm);
	}
	return sm;
}

function project(tmp, file, leaf, leafIndex) {
	const sm = open(tmp, file);
	if (leafIndex !== undefined) {
		const entry = sm.getEntries()[leafIndex];
		if (!entry) throw new Error(`${file}: no entry at index ${leafIndex}`);
		leaf = entry.id;
	}
	const projection =
		leaf === undefined || leaf === null
			? sm.buildSessionProjection()
			: buildSessionProjection(sm.getEntries(), leaf, undefined);
	return convertToLlm(projection.messages);
}

const tmp = mkdtempSync(join(tmpdir(), "pi-project-"));
try {
	const args = process.argv.slice(2);
	if (args[0] === "--batch") {
		const jobs = JSON.parse(readFileSync(0, "utf8"));
		const out = jobs.map((job) => {
			try {
				return { messages: project(tmp, job.file, job.leaf, job.leafIndex) };
			} catch (error) {
				return { error: String(error?.stack ?? error) };
			}
		});
		process.stdout.write(`${JSON.stringify(out)}\n`);
	} else if (args.length === 1 || args.length === 2) {
		process.stdout.write(`${JSON.stringify(project(tmp, args[0], args[1]), null, 2)}\n`);
	} else {
		process.stderr.write("usage: pi_project.mjs FILE [LEAF] | pi_project.mjs --batch < jobs.json\n");
		process.exitCode = 2;
	}
} finally {
	rmSync(tmp, { recursive: true, force: true });
}
