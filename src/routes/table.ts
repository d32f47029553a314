import type { OpenAPIRoute } from "chanfana";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** One row of a resource's route table: method, path relative to /api/v1, endpoint class. */
export type RouteRow = readonly [Method, string, new (...args: never[]) => OpenAPIRoute];
export type RouteTable = readonly RouteRow[];
