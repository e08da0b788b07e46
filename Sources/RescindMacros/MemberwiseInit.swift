/// The `init` Swift writes for a struct, at the struct's own access level: what a `public`
/// type of one module needs to be built in another, without writing out each property twice.
///
/// One parameter per stored property, in declaration order, with the property's initial value
/// as its default; a `let` that has one is not a parameter. Only on a struct whose every stored
/// property has its type written out.
@attached(member, names: named(init))
public macro MemberwiseInit() = #externalMacro(module: "RescindMacrosPlugin", type: "MemberwiseInitMacro")
