/** Shared steps of the skills tests: real HTTP calls for each skill route. */
import { UserSchema } from '../../../db/entities';
import { hashPassword } from '../../../services/kernel/passwords';
import type { z } from 'zod';
import type { skillEnvelopeSchema, skillListSchema, skillLoadResultSchema, skillSchema } from '../../../api/schemas/skills';
import { addUserWithKey, http, signInCookie, type HttpResult, type Refusable, type TestApp, type WorkspaceFixture } from '../../kit';

export const S = '/api/v1/skills';

export type Skill = z.infer<typeof skillSchema>;
export type SkillAnswer = Refusable<z.infer<typeof skillEnvelopeSchema>>;
export type SkillList = Refusable<z.infer<typeof skillListSchema>>;
export type SkillLoadAnswer = Refusable<z.infer<typeof skillLoadResultSchema>>;

export const createSkill = (app: TestApp, token: string, body: unknown): Promise<HttpResult<SkillAnswer>> =>
  http<SkillAnswer>(app, 'POST', S, { token, body });
export const getSkill = (app: TestApp, token: string, id: string): Promise<HttpResult<SkillAnswer>> =>
  http<SkillAnswer>(app, 'GET', `${S}/${id}`, { token });
export const patchSkill = (app: TestApp, token: string, id: string, body: unknown): Promise<HttpResult<SkillAnswer>> =>
  http<SkillAnswer>(app, 'PATCH', `${S}/${id}`, { token, body });
export const deleteSkill = (app: TestApp, token: string, id: string): Promise<HttpResult<SkillAnswer>> =>
  http<SkillAnswer>(app, 'DELETE', `${S}/${id}`, { token });
export const loadSkills = (app: TestApp, token: string, body: unknown): Promise<HttpResult<SkillLoadAnswer>> =>
  http<SkillLoadAnswer>(app, 'POST', `${S}/load`, { token, body });

export async function listSkills(app: TestApp, token: string, query?: string): Promise<Skill[]> {
  const res = await http<SkillList>(app, 'GET', query === undefined ? S : `${S}?query=${encodeURIComponent(query)}`, { token });
  expect(res.status).toBe(200);
  return res.body.skills;
}

/** A session publication move: `request-publication`, `publish`, `rollback` or `archive`. */
export const move = (app: TestApp, cookie: string, id: string, action: string): Promise<HttpResult<SkillAnswer>> =>
  http<SkillAnswer>(app, 'POST', `/api/skills/${id}/${action}`, { cookie });

/** A member of `ws` with a workspace key and a session (their password set directly). */
export async function memberWithSession(app: TestApp, ws: WorkspaceFixture, role: 'admin' | 'member' | 'viewer') {
  const user = await addUserWithKey(app, ws, role);
  const password = `${role} password 0123`;
  await app.orm.em.fork().nativeUpdate(UserSchema, { id: user.userId }, { passwordHash: await hashPassword(password), status: 'active' });
  return { ...user, cookie: await signInCookie(app, user.email, password, ws.workspaceId) };
}

/** Creates a skill and returns it, failing the test on anything but 201. */
export async function newSkill(app: TestApp, token: string, body: Record<string, unknown>): Promise<Skill> {
  const res = await createSkill(app, token, body);
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 201 });
  return res.body.skill;
}
