// ajv.mjs validates JSON values against the schemas of an OpenAPI document
// with ajv, as a client would: its JSON Schema 2020-12 dialect in its
// default configuration (strict, formats checked by ajv-formats), knowing
// the keywords OpenAPI adds to JSON Schema. servicetest runs it beside
// kin-openapi, so that every answer and event the tests collect is held to
// a second, stock validator.
//
//   node ajv.mjs
//
// The first line of stdin is the document. Each line after it is
// {"schema": <a schema of the document, its $refs to
// #/components/schemas>, "value": <a value>}; each line of stdout answers
// one: "" when the value is valid, or else ajv's errors.
import { createInterface } from "node:readline";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { default: Ajv2020 } = require("ajv/dist/2020");
const { default: addFormats } = require("ajv-formats");

const base = "urn:quire:openapi";
// $refs to the document's schemas, as a schema of base's $defs.
const local = (json) => json.replaceAll('"#/components/schemas/', `"${base}#/$defs/`);

const ajv = new Ajv2020();
addFormats(ajv);
ajv.addVocabulary(["example", "discriminator", "xml", "externalDocs"]);

const compiled = new Map();
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!ajv.getSchema(base)) {
    const doc = JSON.parse(line);
    ajv.addSchema({ $id: base, $defs: JSON.parse(local(JSON.stringify(doc.components?.schemas ?? {}))) });
    continue;
  }
  let answer;
  try {
    const { schema, value } = JSON.parse(line);
    const key = local(JSON.stringify(schema));
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(JSON.parse(key));
      compiled.set(key, validate);
    }
    answer = validate(value) ? "" : ajv.errorsText(validate.errors, { separator: "; " });
  } catch (e) {
    answer = `ajv: ${e.message}`;
  }
  process.stdout.write(answer.replaceAll("\n", " ") + "\n");
}
