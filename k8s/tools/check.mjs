// Strict offline validation of rendered Kubernetes manifests (make k8s-check).
//   node check.mjs FILE.yaml...   (run from the install: node_modules beside it; its work/ is
//                                  scratch for the type check)
// Every object of every file must be of a known apiVersion/kind, pass kubernetes-models' runtime
// validation (the API's OpenAPI schema: types, enums, required fields, formats) and type-check
// as the TypeScript interface of its kind under `tsc --strict`, where an object literal with a
// field the schema does not have fails (TS2353): unknown fields are errors at every depth.
// Prints one line per object and exits non-zero when anything fails.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const MODELS = {
  "v1/ConfigMap": "kubernetes-models/v1/ConfigMap",
  "v1/Secret": "kubernetes-models/v1/Secret",
  "v1/Service": "kubernetes-models/v1/Service",
  "v1/PersistentVolumeClaim": "kubernetes-models/v1/PersistentVolumeClaim",
  "batch/v1/Job": "kubernetes-models/batch/v1/Job",
  "networking.k8s.io/v1/NetworkPolicy": "kubernetes-models/networking.k8s.io/v1/NetworkPolicy",
  "monitoring.coreos.com/v1/ServiceMonitor":
    "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor",
};

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node check.mjs FILE.yaml...");
  process.exit(2);
}
// Inside the install, so that the type check resolves the packages (and "type": "module").
const workdir = path.join(path.dirname(fileURLToPath(import.meta.url)), "work");
fs.mkdirSync(workdir, { recursive: true });

let failures = 0;
let ts = "";
const where = []; // the object each `export const dN` stands for
for (const file of files) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length) {
      console.log(`FAIL ${file}#${i}: YAML: ${doc.errors[0].message}`);
      failures++;
      continue;
    }
    const obj = doc.toJS();
    if (obj === null || obj === undefined) continue;
    const key = `${obj.apiVersion}/${obj.kind}`;
    const name = `${file}#${i} ${key} ${obj.metadata?.name ?? "(no name)"}`;
    const module = MODELS[key];
    if (!module) {
      console.log(`FAIL ${name}: no schema for apiVersion ${obj.apiVersion}, kind ${obj.kind}`);
      failures++;
      continue;
    }
    const Model = (await import(module))[obj.kind];
    try {
      new Model(obj).validate();
    } catch (e) {
      console.log(`FAIL ${name}: ${String(e.message).split("\n").slice(0, 6).join(" | ")}`);
      failures++;
      continue;
    }
    const n = where.length;
    where.push(name);
    ts += `import type { I${obj.kind} as T${n} } from "${module}";\n`;
    ts += `export const d${n}: T${n} = ${JSON.stringify(obj, null, 1)};\n`;
  }
}

// The type check: one file, one tsc run; an error's line is mapped back to its object.
if (where.length) {
  const file = path.join(workdir, "objects.ts");
  fs.writeFileSync(file, ts);
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  let out = "";
  try {
    execFileSync(process.execPath, [tsc, "--strict", "--noEmit", "--module", "nodenext",
      "--moduleResolution", "nodenext", "--target", "es2022", file],
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    out = `${e.stdout ?? ""}${e.stderr ?? ""}`;
  }
  const lines = ts.split("\n");
  const bad = new Set();
  for (const m of out.matchAll(/objects\.ts\((\d+),\d+\): (error .*)/g)) {
    let line = Number(m[1]) - 1;
    while (line > 0 && !lines[line].startsWith("export const d")) line--;
    const n = Number(/export const d(\d+)/.exec(lines[line])?.[1] ?? -1);
    const near = lines[Number(m[1]) - 1].trim();
    console.log(`FAIL ${where[n] ?? "?"}: ${m[2]} (at ${near})`);
    bad.add(n);
    failures++;
  }
  if (out && bad.size === 0) {
    console.log(`FAIL tsc: ${out.slice(0, 2000)}`);
    failures++;
  }
  where.forEach((name, n) => { if (!bad.has(n)) console.log(`ok ${name}`); });
}
process.exit(failures ? 1 : 0);
