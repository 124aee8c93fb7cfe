// Fault injection for compile tests (node --import): SIGKILLs this process right before a rename whose target path
// ends with $KILL_BEFORE_RENAME_TO, so a test can crash `register compile` at an exact step instead of by chance.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const target = process.env.KILL_BEFORE_RENAME_TO;
if (target) {
  const rename = fs.promises.rename;
  fs.promises.rename = async (from, to) => {
    if (String(to).endsWith(target)) process.kill(process.pid, 'SIGKILL');
    return rename(from, to);
  };
  // Modules that `import { rename } from 'node:fs/promises'` see the patched function too.
  syncBuiltinESMExports();
}
