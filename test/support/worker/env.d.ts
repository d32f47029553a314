import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../../../src/env";

declare module "vitest" {
  export interface ProvidedContext {
    repohostUrl: string;
    repohostRoot: string;
  }
}

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      TEST_SIGNING_JWK: string;
    }
    interface GlobalProps {
      mainModule: typeof import("../../../src/index");
    }
  }
}
