/** The docs pages' vendored assets, copied from node_modules into public/vendor at set-up. */
export const DOCS_ASSET_SOURCES = {
  "swagger-ui.css": "node_modules/swagger-ui-dist/swagger-ui.css",
  "swagger-ui-bundle.js": "node_modules/swagger-ui-dist/swagger-ui-bundle.js",
  "redoc.standalone.js": "node_modules/redoc/bundles/redoc.standalone.js",
} as const;

export type DocsAsset = keyof typeof DOCS_ASSET_SOURCES;

/**
 * ReDoc's sidebar shows a "powered by" logo fetched from Redocly's CDN; the vendored copy
 * points it at an inline image instead, so the page makes no outside request at all.
 */
export const DOCS_ASSET_REWRITES: Partial<Record<DocsAsset, [string, string][]>> = {
  "redoc.standalone.js": [
    ["https://cdn.redoc.ly/redoc/logo-mini.svg", "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"],
  ],
};
