import AuditService
import RescindServiceSupport

// rescind-audit-service: configuration from RESCIND_* environment variables (see docs/configuration.md).
await ServiceProcess.main("audit service", configuration: AuditServiceConfiguration.self, build: AuditServiceApplication.build)
