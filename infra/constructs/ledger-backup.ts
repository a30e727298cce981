import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  BackupPlan,
  BackupPlanRule,
  BackupResource,
  BackupVault,
  type IBackupVault,
} from 'aws-cdk-lib/aws-backup';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { Construct } from 'constructs';
import type { BackupSettings } from '#infra/config/deployment-config.ts';

/** Properties of a {@link LedgerBackup}. */
export interface LedgerBackupProps extends BackupSettings {
  /** The table that holds the money. */
  readonly table: ITable;
  /** The stage, for the vault's and plan's names. */
  readonly stageName: string;
}

/**
 * An AWS Backup plan for the wallet table, on top of its point-in-time recovery: PITR restores
 * to any second of the last 35 days but lives and dies with the table's account and region, and
 * a deleted table takes its PITR window with it. A daily recovery point goes to a vault of its
 * own (retained when the stack goes), optionally copied to a vault in another region or account.
 * Restore steps and the drill: docs/operations.md, "Restoring the ledger".
 */
export class LedgerBackup extends Construct {
  readonly vault: BackupVault;
  readonly plan: BackupPlan;

  constructor(scope: Construct, id: string, props: LedgerBackupProps) {
    super(scope, id);
    const name = `wallet-catalog-${props.stageName}-ledger`;
    this.vault = new BackupVault(this, 'Vault', {
      backupVaultName: name,
      // Recovery points must outlive the stack that made them: that is what they are for.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const retention = Duration.days(props.retentionDays);
    const copyTo: IBackupVault | undefined = props.copyVaultArn
      ? BackupVault.fromBackupVaultArn(this, 'CopyVault', props.copyVaultArn)
      : undefined;
    this.plan = new BackupPlan(this, 'Plan', { backupPlanName: name, backupVault: this.vault });
    this.plan.addRule(
      new BackupPlanRule({
        ruleName: 'Daily',
        // 03:00 UTC, outside the busiest hours of most regions; the job starts within 8 hours.
        scheduleExpression: Schedule.cron({ hour: '3', minute: '0' }),
        deleteAfter: retention,
        copyActions: copyTo ? [{ destinationBackupVault: copyTo, deleteAfter: retention }] : [],
      }),
    );
    const selection = this.plan.addSelection('Ledger', {
      resources: [BackupResource.fromDynamoDbTable(props.table)],
      allowRestores: true,
    });
    Validations.of(selection).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
      reason:
        'AWSBackupServiceRolePolicyForBackup is the AWS-maintained policy AWS Backup documents for its service role; the selection limits what it backs up to the wallet table.',
    });
    Validations.of(selection).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForRestores]',
      reason:
        'AWSBackupServiceRolePolicyForRestores is the AWS-maintained policy AWS Backup documents for restores, which create a new table from a recovery point; the drill in docs/operations.md uses it.',
    });
  }
}
