/**
 * Which items a DynamoDB request names, read from its JSON body as the proxy receives it: what the
 * conflict tracker (`dynamodb-conflicts.ts`) decides on. A Put carries its whole item, so its key is
 * picked out by the table's key schema, asked of DynamoDB Local once per table.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { ItemRef, NamedItems } from './dynamodb-conflicts.ts';

type Key = Record<string, AttributeValue>;

interface TransactWriteBody {
  TransactItems?: Array<{
    Put?: { TableName?: string; Item?: Key };
    Update?: { TableName?: string; Key?: Key };
    Delete?: { TableName?: string; Key?: Key };
    ConditionCheck?: { TableName?: string; Key?: Key };
  }>;
  ClientRequestToken?: string;
}

/** The key attribute names of each table, as DynamoDB Local describes them; looked up once per table. */
export class KeySchemas {
  readonly #client: DynamoDBClient;
  readonly #names = new Map<string, Promise<readonly string[] | undefined>>();

  constructor(client: DynamoDBClient) {
    this.#client = client;
  }

  /** The key attribute names of `table`; `undefined` when it cannot be described (then DynamoDB refuses the request anyway). */
  of(table: string): Promise<readonly string[] | undefined> {
    let names = this.#names.get(table);
    if (names === undefined) {
      names = this.#client.send(new DescribeTableCommand({ TableName: table })).then(
        ({ Table }) => Table?.KeySchema?.map((element) => element.AttributeName as string),
        () => {
          // Not there (yet): ask again next time, the table may be created meanwhile.
          this.#names.delete(table);
          return undefined;
        },
      );
      this.#names.set(table, names);
    }
    return names;
  }
}

/**
 * The items `operation` names with `body`, or `undefined` for an operation that names none the
 * tracker cares about (GetItem, Query, Scan, BatchGetItem, …) or a body it cannot read (DynamoDB
 * answers that one itself).
 */
export async function namedItems(
  operation: string,
  body: string,
  schemas: KeySchemas,
): Promise<NamedItems | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const request = parsed as Record<string, unknown>;
  const keyed = (table: unknown, key: unknown): ItemRef | undefined =>
    typeof table === 'string' && key !== null && typeof key === 'object'
      ? { table, key: key as Key }
      : undefined;
  const put = async (table: unknown, item: unknown): Promise<ItemRef | undefined> => {
    if (typeof table !== 'string' || item === null || typeof item !== 'object') return undefined;
    const names = await schemas.of(table);
    if (names === undefined || !names.every((name) => name in item)) return undefined;
    return {
      table,
      key: Object.fromEntries(names.map((name) => [name, (item as Key)[name] as AttributeValue])),
    };
  };
  switch (operation) {
    case 'PutItem':
      return { kind: 'write', items: [await put(request.TableName, request.Item)] };
    case 'UpdateItem':
    case 'DeleteItem':
      return { kind: 'write', items: [keyed(request.TableName, request.Key)] };
    case 'TransactWriteItems': {
      const { TransactItems = [], ClientRequestToken } = request as TransactWriteBody;
      const items = await Promise.all(
        TransactItems.map((action) => {
          if (action.Put) return put(action.Put.TableName, action.Put.Item);
          const keyedAction = action.Update ?? action.Delete ?? action.ConditionCheck;
          return keyedAction ? keyed(keyedAction.TableName, keyedAction.Key) : undefined;
        }),
      );
      return { kind: 'transaction', items, ...(ClientRequestToken ? { token: ClientRequestToken } : {}) };
    }
    case 'TransactGetItems': {
      const { TransactItems = [] } = request as {
        TransactItems?: Array<{ Get?: { TableName?: string; Key?: Key } }>;
      };
      return {
        kind: 'transactional-read',
        items: TransactItems.map((action) => keyed(action.Get?.TableName, action.Get?.Key)),
      };
    }
    default:
      return undefined;
  }
}
