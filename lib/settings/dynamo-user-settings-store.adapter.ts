import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../kernel/memory-paths.js';
import { readUserSettings, type SettingsChange, type UserSettings } from './user-settings.js';
import type { UserSettingsStore } from './user-settings.port.js';
import type { StorageTable } from '../kernel/storage.adapter.js';

/**
 * A user's settings: one item (`USER#{u}` / `SETTINGS`), a field per setting. A change is one
 * UpdateItem that SETs the fields given and REMOVEs those cleared, so two changes of different
 * fields at once both land, with no read before the write.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html
 */
export class DynamoUserSettingsStore implements UserSettingsStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(storage: StorageTable) {
    this.ddb = storage.ddb;
    this.tableName = storage.tableName;
  }

  async get(userId: string): Promise<UserSettings> {
    const res = await this.ddb.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: keys.userPk(userId), sk: keys.settingsSk } }),
    );
    return readUserSettings(res.Item);
  }

  async update(userId: string, change: SettingsChange): Promise<UserSettings> {
    const entries = Object.entries(change).filter(([, v]) => v !== undefined);
    const set = entries.filter(([, v]) => v !== null);
    const removed = entries.filter(([, v]) => v === null);
    const names = Object.fromEntries(entries.map(([k]) => [`#${k}`, k]));
    const values = Object.fromEntries(set.map(([k, v]) => [`:${k}`, v]));
    const expression = [
      `SET #type = :type${set.map(([k]) => `, #${k} = :${k}`).join('')}`,
      ...(removed.length > 0 ? [`REMOVE ${removed.map(([k]) => `#${k}`).join(', ')}`] : []),
    ].join(' ');
    const res = await this.ddb.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.userPk(userId), sk: keys.settingsSk },
        UpdateExpression: expression,
        ExpressionAttributeNames: { ...names, '#type': 'type' },
        ExpressionAttributeValues: { ...values, ':type': 'settings' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return readUserSettings(res.Attributes);
  }
}
