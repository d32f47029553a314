import { and, eq } from "drizzle-orm";
import type { Database } from "./client";
import { repohostTokens } from "./schema";

/** A token as stored: AES-GCM ciphertext and IV, base64 (services/secrets/token-box.ts seals and opens it). */
export interface SealedToken {
  ciphertext: string;
  iv: string;
}

export type RepohostTokenRow = typeof repohostTokens.$inferSelect;

export async function saveRepohostToken(
  db: Database,
  row: { organizationId: string; host: string; sealed: SealedToken; last4: string; createdBy: string },
): Promise<RepohostTokenRow> {
  const values = {
    organizationId: row.organizationId,
    host: row.host,
    ciphertext: row.sealed.ciphertext,
    iv: row.sealed.iv,
    last4: row.last4,
    createdBy: row.createdBy,
    createdAt: new Date().toISOString(),
  };
  return db
    .insert(repohostTokens)
    .values(values)
    .onConflictDoUpdate({ target: [repohostTokens.organizationId, repohostTokens.host], set: values })
    .returning()
    .get();
}

export async function listRepohostTokens(db: Database, organizationId: string): Promise<RepohostTokenRow[]> {
  return db.select().from(repohostTokens).where(eq(repohostTokens.organizationId, organizationId)).orderBy(repohostTokens.host).all();
}

export async function findRepohostToken(db: Database, organizationId: string, host: string): Promise<RepohostTokenRow | undefined> {
  return db
    .select()
    .from(repohostTokens)
    .where(and(eq(repohostTokens.organizationId, organizationId), eq(repohostTokens.host, host)))
    .get();
}

export async function deleteRepohostToken(db: Database, organizationId: string, host: string): Promise<boolean> {
  const deleted = await db
    .delete(repohostTokens)
    .where(and(eq(repohostTokens.organizationId, organizationId), eq(repohostTokens.host, host)))
    .returning({ host: repohostTokens.host })
    .all();
  return deleted.length > 0;
}
