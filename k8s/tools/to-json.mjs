// Prints the objects of a multi-document YAML file (kubectl kustomize's output) as one JSON array,
// for the tests that read the rendered manifests (tests/integration/test_k8s_fleet.sh).
import fs from "node:fs";
import YAML from "yaml";
const docs = YAML.parseAllDocuments(fs.readFileSync(process.argv[2], "utf8"))
  .map((d) => d.toJS()).filter((d) => d !== null && d !== undefined);
process.stdout.write(JSON.stringify(docs));
