import { storageUrlProblem, type SignedUrlParams } from "../services/storage/worker-signer";
import { HttpError } from "./errors";

/** The credential of the storage routes: 403 unless the URL is one the Worker signed and it has not expired. */
export async function requireSignedUrl(secret: string, url: SignedUrlParams, sig: string): Promise<void> {
  const problem = await storageUrlProblem(secret, url, sig);
  if (problem) throw HttpError.forbidden(problem);
}
