/** The docs pages' vendored assets, copied from node_modules into public/vendor at set-up. */
export const DOCS_ASSET_SOURCES = {
  "swagger-ui.css": "node_modules/swagger-ui-dist/swagger-ui.css",
  "swagger-ui-bundle.js": "node_modules/swagger-ui-dist/swagger-ui-bundle.js",
  "redoc.standalone.js": "node_modules/redoc/bundles/redoc.standalone.js",
} as const;

export type DocsAsset = keyof typeof DOCS_ASSET_SOURCES;
