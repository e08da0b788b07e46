import RescindServiceSupport

/// Opened by `ServiceDatabase.open`, as every service's database is.
extension GrantServiceConfiguration.Database: ServiceDatabaseSettings {}
