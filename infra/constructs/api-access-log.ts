import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';

/** One JSON object per request: who called what, how it ended, and where the time went. */
export function apiAccessLogFormat(): AccessLogFormat {
  return AccessLogFormat.custom(
    JSON.stringify({
      requestId: AccessLogField.contextRequestId(),
      extendedRequestId: AccessLogField.contextExtendedRequestId(),
      xrayTraceId: AccessLogField.contextXrayTraceId(),
      requestTime: AccessLogField.contextRequestTime(),
      // Lets a metric filter tell stages apart when several share an account.
      stage: AccessLogField.contextStage(),
      ip: AccessLogField.contextIdentitySourceIp(),
      userAgent: AccessLogField.contextIdentityUserAgent(),
      httpMethod: AccessLogField.contextHttpMethod(),
      resourcePath: AccessLogField.contextResourcePath(),
      path: AccessLogField.contextPath(),
      protocol: AccessLogField.contextProtocol(),
      status: AccessLogField.contextStatus(),
      responseLength: AccessLogField.contextResponseLength(),
      responseLatency: AccessLogField.contextResponseLatency(),
      integrationStatus: AccessLogField.contextIntegrationStatus(),
      integrationLatency: AccessLogField.contextIntegrationLatency(),
      integrationError: AccessLogField.contextIntegrationErrorMessage(),
      principalId: AccessLogField.contextAuthorizerPrincipalId(),
      authorizerStatus: AccessLogField.contextAuthorizerStatus(),
      authorizerLatency: AccessLogField.contextAuthorizerLatency(),
      authorizerError: AccessLogField.contextAuthorizerError(),
      errorType: AccessLogField.contextErrorResponseType(),
      errorMessage: AccessLogField.contextErrorMessage(),
    }),
  );
}
