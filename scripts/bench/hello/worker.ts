// The baseline of `npm run bench -- api`: the least a Worker can do under the same wrangler dev.
export default {
  fetch(): Response {
    return new Response("ok");
  },
};
