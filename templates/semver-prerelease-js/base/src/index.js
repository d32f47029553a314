export { compare, parse, sort } from "./semver.js";
