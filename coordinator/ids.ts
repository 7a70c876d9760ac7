// Why: group and rollout ids are minted in more than one place (a trainer's submit, a rollout
// API task, a replacement for a flat group); one function spells them.
import { randomBytes } from "node:crypto";

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;
