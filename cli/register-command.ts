// The `register` command tree, declared once with citty (parsing, help and --version come from it); each command's
// module loads only when that command runs (or its help is shown), so `keys list` does not load the compiler.
import { defineCommand, type ArgsDef, type CommandDef } from 'citty';
import pkg from '../package.json' with { type: 'json' };

type Lazy = () => Promise<CommandDef<ArgsDef>>;
const lazy = <M>(load: () => Promise<M>, pick: (m: M) => unknown): Lazy => async () => pick(await load()) as CommandDef<ArgsDef>;

export const registerCommand = defineCommand({
  meta: { name: 'register', version: pkg.version, description: 'Release compiler and runtime router of the football identity register' },
  subCommands: {
    generate: lazy(() => import('./generate-commands.ts'), (m) => m.generateCommand),
    'import-v0': lazy(() => import('./generate-commands.ts'), (m) => m.importV0Command),
    compile: lazy(() => import('../compiler/cli.ts'), (m) => m.compileCommand),
    verify: lazy(() => import('../compiler/cli.ts'), (m) => m.verifyCommand),
    check: lazy(() => import('./check-command.ts'), (m) => m.checkCommand),
    pull: lazy(() => import('../mirror/pull-cli.ts'), (m) => m.pullCommand),
    sign: lazy(() => import('../compiler/sign-cli.ts'), (m) => m.signCommand),
    'signing-key': lazy(() => import('../compiler/sign-cli.ts'), (m) => m.signingKeyCommand),
    serve: lazy(() => import('../runtime/cli.ts'), (m) => m.serveCommand),
    start: lazy(() => import('../runtime/cli.ts'), (m) => m.startCommand),
    keys: lazy(() => import('../runtime/keys/keys-cli.ts'), (m) => m.keysCommandDef),
    edge: lazy(() => import('../edge/edge-cli.ts'), (m) => m.edgeCommand),
  },
});
