import type { OpenAPIRouteSchema } from "chanfana";
import { z } from "zod";
import { attachmentDisposition, MAX_STORAGE_KEY_LENGTH, storageKeyProblem } from "../domain/storage-keys";
import { storedObject, storeObject } from "../flows/storage.flow";
import { jsonResponse, PublicEndpoint, type RouteContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { requireSignedUrl } from "../http/signed-urls";
import type { RouteTable } from "./table";

// Percent-encoding at most triples a key's length.
const KeyParam = z.object({
  key: z
    .string()
    .max(3 * MAX_STORAGE_KEY_LENGTH)
    .transform((raw, ctx) => {
      let key: string;
      try {
        key = decodeURIComponent(raw);
      } catch {
        ctx.addIssue({ code: "custom", message: "the key is not valid percent-encoding" });
        return z.NEVER;
      }
      const problem = storageKeyProblem(key);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
      return key;
    })
    .describe("The object key as one path segment, '/' encoded as %2F"),
});

const signature = {
  expires: z.number().int().min(0).describe("Unix time in seconds after which the URL is refused"),
  sig: z.string().max(256).describe("HMAC-SHA256 of the method, key, expiry and size limit"),
};

const forbidden = { description: "Bad signature, or the URL expired", content: { "application/json": { schema: ErrorSchema } } };

const DESCRIPTION =
  "Presigned URLs issued by the service when R2 S3 credentials are not configured (see docs/api.md). " +
  "The signature is the credential: use the URL exactly as issued, before it expires.";

/** The signature is the credential; these routes are not rate-limited per IP (src/domain/rate-scopes.ts). */
abstract class SignedUrlEndpoint extends PublicEndpoint {
  override getSchema(): OpenAPIRouteSchema {
    const schema = super.getSchema();
    delete schema.responses?.["429"];
    return schema;
  }
}

export class GetStoredObject extends SignedUrlEndpoint {
  schema = {
    tags: ["storage"],
    summary: "Download an object through a presigned URL",
    description: DESCRIPTION,
    request: { params: KeyParam, query: z.object(signature) },
    responses: {
      "200": {
        description:
          "The object, streamed, as an attachment (Content-Disposition) with X-Content-Type-Options: nosniff and a " +
          "sandboxing Content-Security-Policy",
        content: { "application/octet-stream": { schema: z.any() } },
      },
      "403": forbidden,
      "404": jsonResponse("No object at this key", ErrorSchema),
    },
  };

  async run({ env }: RouteContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    await requireSignedUrl(env.URL_SIGNING_SECRET, { method: "GET", key: params.key, expires: query.expires }, query.sig);
    const object = unwrap(await storedObject(env, params.key));
    const headers = new Headers({ "Content-Type": "application/octet-stream", "Cache-Control": "private, no-store" });
    object.writeHttpMetadata(headers);
    headers.set("ETag", object.httpEtag);
    headers.set("Content-Length", String(object.size));
    // Set last, over any stored metadata: a candidate's JUnit XML or log is served from the
    // API's origin and must never be rendered there or run script (the Worker's entry adds
    // nosniff to every answer, so it is never sniffed into HTML either).
    headers.set("Content-Disposition", attachmentDisposition(params.key));
    headers.set("Content-Security-Policy", "sandbox; default-src 'none'");
    return new Response(object.body, { headers });
  }
}

export class PutStoredObject extends SignedUrlEndpoint {
  schema = {
    tags: ["storage"],
    summary: "Upload an object through a presigned URL",
    description: `${DESCRIPTION} The body (any type) is stored as it streams in, so Content-Length is required; the stored object's type is the request's Content-Type.`,
    request: {
      params: KeyParam,
      query: z.object({
        ...signature,
        max: z.number().int().min(0).optional().describe("Largest body the URL admits, in bytes"),
      }),
    },
    responses: {
      "200": jsonResponse("Stored", z.object({ key: z.string(), size: z.number().int() }).meta({ id: "StoredObject" })),
      "403": forbidden,
      "411": jsonResponse("No Content-Length", ErrorSchema),
      "413": jsonResponse("Larger than the URL admits", ErrorSchema),
    },
  };

  async run({ request, env }: RouteContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    await requireSignedUrl(
      env.URL_SIGNING_SECRET,
      { method: "PUT", key: params.key, expires: query.expires, maxBytes: query.max },
      query.sig,
    );
    const declared = request.headers.get("content-length");
    if (declared === null || !/^\d+$/.test(declared)) {
      throw new HttpError(411, "Content-Length is required: uploads are stored as they stream in");
    }
    const stored = unwrap(
      await storeObject(env, params.key, {
        size: Number(declared),
        body: request.body,
        contentType: request.headers.get("content-type") ?? "application/octet-stream",
        maxBytes: query.max,
      }),
    );
    return json({ key: stored.key, size: stored.size }, 200, { ETag: stored.httpEtag });
  }
}

export const storageRoutes: RouteTable = [
  ["GET", "/storage/:key", GetStoredObject],
  ["PUT", "/storage/:key", PutStoredObject],
];
