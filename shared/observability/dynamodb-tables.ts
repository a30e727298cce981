/**
 * The tables a DynamoDB request names: its `TableName`, or the tables of a batch (`RequestItems`)
 * or of a transaction's items. What a trace records of the call.
 */
export function tableNamesOf(input: unknown): string[] {
  const request = input as {
    TableName?: string;
    RequestItems?: Record<string, unknown>;
    TransactItems?: Record<string, { TableName?: string }>[];
  };
  if (request.TableName) return [request.TableName];
  if (request.RequestItems) return Object.keys(request.RequestItems);
  const inItems = (request.TransactItems ?? []).flatMap((item) =>
    Object.values(item).flatMap((action) => (action.TableName ? [action.TableName] : [])),
  );
  return [...new Set(inItems)];
}
