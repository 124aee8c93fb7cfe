// Keys kept in the state store itself (`register keys … --state URL`, `serve --keys state`): the driver is the one
// of the engine the `--state` scheme opened.

import { RegisterError } from '../../common/errors.ts';
import type { KeyRepository } from '../interfaces.ts';
import type { OpenedState } from '../state/open-state-store.ts';
import { redisKeyRepository } from './redis-key-repository.ts';
import { sqliteKeyRepository } from './sqlite-key-repository.ts';

/** The key table of the store `opened` names; memory: has none (a key there would die with the command). */
export function keyRepositoryFor(opened: OpenedState, label: string): KeyRepository {
  const engine = opened.engine;
  if (engine === null) throw new RegisterError('keys', 'memory: keeps nothing between processes; keep keys in a keys file, sqlite:PATH or redis://');
  switch (engine.kind) {
    case 'sqlite':
      return sqliteKeyRepository({ db: engine.sqlite.db, label });
    case 'redis':
      return redisKeyRepository({ client: engine.redis.client, label });
  }
}
