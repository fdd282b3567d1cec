// decode.mjs — reads DynamoDB's Ion export lines with ion-js, an Ion implementation
// independent of quarry's, and prints each line as JSON of DynamoDB AttributeValues:
// structs as M, lists as L or (annotated $dynamodb_SS/NS/BS) sets, decimals and ints
// as N (Ion's own text of the number), blobs as B (base64). Usage: node decode.mjs FILE.gz
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import * as ion from "ion-js";

function av(v) {
  const t = v.getType();
  const notes = v.getAnnotations();
  if (v.isNull()) return { NULL: true };
  if (t === ion.IonTypes.STRUCT) {
    const m = {};
    for (const [name, field] of v.fields()) m[name] = av(field);
    return { M: m };
  }
  if (t === ion.IonTypes.LIST) {
    const set = notes.find((a) => a.startsWith("$dynamodb_"));
    const members = [...v].map(av);
    if (!set) return { L: members };
    const kind = set.slice("$dynamodb_".length); // SS, NS or BS
    return { [kind]: members.map((m) => m[kind[0]]) };
  }
  if (t === ion.IonTypes.STRING) return { S: v.stringValue() };
  if (t === ion.IonTypes.BOOL) return { BOOL: v.booleanValue() };
  if (t === ion.IonTypes.DECIMAL) return { N: v.decimalValue().toString() };
  if (t === ion.IonTypes.INT) return { N: v.bigIntValue().toString() };
  if (t === ion.IonTypes.BLOB) return { B: Buffer.from(v.uInt8ArrayValue()).toString("base64") };
  throw new Error("an Ion value DynamoDB does not write: " + t.name);
}

const text = gunzipSync(readFileSync(process.argv[2])).toString("utf8");
for (const line of text.split("\n")) {
  if (line.trim() === "") continue;
  const values = ion.loadAll(line);
  if (values.length !== 1) throw new Error("one value a line, got " + values.length);
  const top = av(values[0]);
  console.log(JSON.stringify(top.M));
}
