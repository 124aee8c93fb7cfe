// The `register` CLI's entry (bin/register.mjs runs its build): the command line against the command tree.
import { main } from './command-line.ts';
import { registerCommand } from './register-command.ts';

await main(registerCommand, process.argv.slice(2));
