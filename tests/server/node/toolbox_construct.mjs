// toolbox_construct.mjs — loads each module `quarry model export --format dynamodb-toolbox`
// wrote (argv[2...]) and makes every Table and Entity in it, without a server: dynamodb-toolbox
// checks each entity's schema against its table's keys as it is made. Prints one line per
// module that fails; exits 1 if one did.
import { pathToFileURL } from 'node:url';

let failures = 0;
for (const file of process.argv.slice(2)) {
  try {
    const mod = await import(pathToFileURL(file).href);
    const tables = Object.fromEntries(Object.entries(mod.tables).map(([n, make]) => [n, make()]));
    for (const [n, make] of Object.entries(mod.entities)) make(tables[mod.tableOf[n]]);
  } catch (err) {
    failures++;
    console.log(`${file}: ${err.name}: ${err.message}`);
  }
}
process.exit(failures ? 1 : 0);
