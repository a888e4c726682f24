#!/usr/bin/env node
// Stands in for pi's dist/cli.js when pi's RpcClient starts "node CLI --mode rpc ...": runs
// `PYTHON -m agent_tui` with the same arguments on the same stdin, stdout and stderr, forwards
// SIGTERM / SIGINT to it, and exits with its status. PYTHON is $AGENT_TUI_PYTHON.
import { spawn } from "node:child_process";

const child = spawn(process.env.AGENT_TUI_PYTHON, ["-m", "agent_tui", ...process.argv.slice(2)], {
	stdio: "inherit",
});
for (const name of ["SIGTERM", "SIGINT"]) process.on(name, () => child.kill(name));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
