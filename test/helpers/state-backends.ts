/**
 * The two state-store backends, for suites that must hold on both (issue 20):
 * the embedded DuckDB file (always) and PostgreSQL (a fresh database on
 * DATABASE_URL's server; `skip` without one, which helpers/postgres.ts
 * announces, and never under REQUIRE_POSTGRES=1).
 */
import { PgStateStore } from '../../service/platform/state.postgres.ts';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import { removeDir, tempDir } from './env.ts';
import { freshDatabase, HAS_POSTGRES } from './postgres.ts';

export interface StateBackend {
  name: string;
  skip: boolean;
  /** Opens a fresh, empty store; `dispose` closes and removes it. */
  open(): Promise<{ store: StateStore; dispose: () => Promise<void>; file?: string }>;
}

export const STATE_BACKENDS: StateBackend[] = [
  {
    name: 'embedded DuckDB',
    skip: false,
    open: async () => {
      const dir = await tempDir('proofline-store-');
      const file = stateDbPath(dir);
      const store = await StateStore.open(file);
      return {
        store,
        file,
        dispose: async () => {
          await store.close().catch(() => undefined);
          await removeDir(dir);
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    skip: !HAS_POSTGRES,
    open: async () => {
      const db = await freshDatabase();
      const store = await PgStateStore.open(db.url);
      return {
        store,
        dispose: async () => {
          await store.close().catch(() => undefined);
          await db.drop();
        },
      };
    },
  },
];
