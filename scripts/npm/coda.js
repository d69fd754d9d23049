#!/usr/bin/env node
// coda.js: the coda-acp npm package's `coda` command. It finds the platform
// package npm installed beside it (an optional dependency whose os and cpu
// fit this machine, as esbuild and codex-acp ship theirs) and runs its coda
// binary with this command's arguments. stdin, stdout and stderr are the
// child's own (an editor's ACP stream passes straight through, no copy in
// Node); a signal sent to this process is passed on, and it exits as coda
// did: with its status, or killed by the same signal. Plain Node, no
// dependencies. scripts/release.sh copies it to dist/npm/coda-acp/bin/.
"use strict";

const { spawn } = require("node:child_process");
const os = require("node:os");
const path = require("node:path");
const tty = require("node:tty");

const platform = `${process.platform}-${process.arch}`;
const packages = {
  "darwin-arm64": "@coda-acp/coda-darwin-arm64",
  "darwin-x64": "@coda-acp/coda-darwin-x64",
  "linux-arm64": "@coda-acp/coda-linux-arm64",
  "linux-x64": "@coda-acp/coda-linux-x64",
  "win32-arm64": "@coda-acp/coda-win32-arm64",
  "win32-x64": "@coda-acp/coda-win32-x64",
};

function fail(message) {
  process.stderr.write(`coda: ${message}\n`);
  process.exit(1);
}

const pkg = packages[platform];
if (!pkg) {
  fail(
    `no coda build for ${platform}; the builds are ${Object.keys(packages).join(", ")}. ` +
      "Build coda from source with Go: https://github.com/coda-acp/coda",
  );
}

let binary;
try {
  const manifest = require.resolve(`${pkg}/package.json`);
  binary = path.join(path.dirname(manifest), "bin", process.platform === "win32" ? "coda.exe" : "coda");
} catch {
  fail(
    `the package ${pkg}, which holds coda for ${platform}, is not installed. ` +
      "npm installs it with coda-acp unless optional dependencies are left out " +
      "(--omit=optional, --no-optional) or the lock file was made on another platform: " +
      "reinstall coda-acp without those.",
  );
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// Pass on what would stop this process, so coda stops as its parent asked
// (an editor's or acpx's SIGTERM) and is never left behind. Catching them
// also keeps this process alive until coda has drained and exited. A
// terminal's Ctrl-C (or Ctrl-\) already reaches coda itself, in the same
// foreground process group: passed on too, it would be coda's second
// SIGINT, which ends it at once, without the drain the first one starts.
// (tty.isatty, not process.stdin.isTTY: that opens a stream on the fd
// coda shares, which Node may switch to non-blocking.)
const terminal = [0, 1, 2].some((fd) => tty.isatty(fd));
const fromTerminal = new Set(["SIGINT", "SIGQUIT", "SIGBREAK"]);
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGBREAK"].filter((s) => s in os.constants.signals);
const handlers = new Map();
for (const signal of forwarded) {
  const handler = () => {
    if (terminal && fromTerminal.has(signal)) {
      return;
    }
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  };
  handlers.set(signal, handler);
  process.on(signal, handler);
}

child.on("error", (err) => {
  fail(`cannot start ${binary}: ${err.message}`);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so our parent sees what coda's would have.
    for (const [s, handler] of handlers) {
      process.removeListener(s, handler);
    }
    // Should it not end this process (Windows has no such death), exit
    // as a shell reports one: 128 + the signal's number.
    process.exitCode = 128 + (os.constants.signals[signal] || 0);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
