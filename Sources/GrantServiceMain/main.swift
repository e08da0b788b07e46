import GrantService
import RescindServiceSupport

// rescind-grant-service: configuration from RESCIND_* environment variables (see docs/configuration.md).
await ServiceProcess.main("grant service", configuration: GrantServiceConfiguration.self, build: GrantServiceApplication.build)
