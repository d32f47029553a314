import type { Adapter, AdapterPayload } from "oidc-provider";

interface Entry {
  model: string;
  payload: AdapterPayload;
  expiresAt: number;
}

/**
 * oidc-provider's storage (sessions, interactions, grants, codes, tokens) in this process's
 * memory, one store per provider, so providers started side by side in tests share nothing. A
 * restart signs everyone out, as the cookie keys are new then too. oidc-provider's own memory
 * adapter would do the same but warns on every start that it is for development only.
 */
export function memoryStorage(): (model: string) => Adapter {
  const entries = new Map<string, Entry>();

  const live = (key: string): AdapterPayload | undefined => {
    const entry = entries.get(key);
    if (entry && entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry?.payload;
  };

  return (model) => {
    const key = (id: string) => `${model}:${id}`;
    const keysWhere = (test: (payload: AdapterPayload) => boolean) =>
      [...entries].filter(([, entry]) => entry.model === model && test(entry.payload)).map(([k]) => k);
    return {
      async upsert(id, payload, expiresIn) {
        const now = Date.now();
        // Every sign-in leaves a few entries behind; they go once they have expired.
        for (const [k, entry] of entries) if (entry.expiresAt <= now) entries.delete(k);
        entries.set(key(id), { model, payload, expiresAt: expiresIn ? now + expiresIn * 1000 : Number.POSITIVE_INFINITY });
      },
      async find(id) {
        return live(key(id));
      },
      async findByUid(uid) {
        const [found] = keysWhere((payload) => payload.uid === uid);
        return found ? live(found) : undefined;
      },
      // Device codes are not enabled, so none is ever stored.
      async findByUserCode() {
        return undefined;
      },
      async consume(id) {
        const payload = live(key(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        entries.delete(key(id));
      },
      async revokeByGrantId(grantId) {
        for (const k of keysWhere((payload) => payload.grantId === grantId)) entries.delete(k);
      },
    };
  };
}
