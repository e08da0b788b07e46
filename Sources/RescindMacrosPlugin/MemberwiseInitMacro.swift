import SwiftCompilerPlugin
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// Expands `@MemberwiseInit` into the `init` Swift writes for a struct, at the struct's own
/// access level (`public`, `package` or internal) instead of always internal: one parameter per
/// stored property in declaration order, its initial value as the default. A `let` with an
/// initial value is not a parameter; computed properties and `static` ones are left out.
public struct MemberwiseInitMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let structure = declaration.as(StructDeclSyntax.self) else {
            throw refusal("@MemberwiseInit applies to a struct", at: node)
        }
        let access = structure.modifiers.first { ["public", "package"].contains($0.name.text) }.map { "\($0.name.text) " } ?? ""
        let properties = try structure.memberBlock.members.flatMap { member in
            try member.decl.as(VariableDeclSyntax.self).map(storedProperties) ?? []
        }
        let parameters = properties.map { "\($0.name): \($0.type)\($0.initialValue.map { " = \($0)" } ?? "")" }
        let assignments = properties.map { "self.\($0.name) = \($0.name)" }
        return [
            """
            \(raw: access)init(\(raw: parameters.joined(separator: ", "))) {
            \(raw: assignments.joined(separator: "\n"))
            }
            """
        ]
    }

    struct Property {
        let name: String
        let type: String
        let initialValue: String?
    }

    /// The stored properties a memberwise `init` sets, of one `var` or `let` declaration.
    static func storedProperties(of variable: VariableDeclSyntax) throws -> [Property] {
        if variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) }) { return [] }
        let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
        return try variable.bindings.compactMap { binding in
            if let accessors = binding.accessorBlock, isComputed(accessors) { return nil }
            if isLet && binding.initializer != nil { return nil }
            guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription else {
                throw refusal("@MemberwiseInit needs one name per stored property", at: binding)
            }
            guard let type = binding.typeAnnotation?.type.trimmedDescription else {
                throw refusal("@MemberwiseInit needs the type of '\(name)' written out", at: binding)
            }
            return Property(name: name, type: type, initialValue: binding.initializer?.value.trimmedDescription)
        }
    }

    /// Whether `accessors` make a property computed (a getter), rather than observe a stored one.
    static func isComputed(_ accessors: AccessorBlockSyntax) -> Bool {
        switch accessors.accessors {
        case .getter: return true
        case .accessors(let list):
            return list.contains { ![.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
        }
    }
}

/// A use of `@MemberwiseInit` the macro cannot expand, reported as an error at the code concerned.
func refusal(_ message: String, at node: some SyntaxProtocol) -> DiagnosticsError {
    DiagnosticsError(diagnostics: [Diagnostic(node: node, message: Refusal(message: message))])
}

struct Refusal: DiagnosticMessage {
    let message: String
    var diagnosticID: MessageID { MessageID(domain: "RescindMacros", id: "MemberwiseInit") }
    var severity: DiagnosticSeverity { .error }
}

@main
struct RescindMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [MemberwiseInitMacro.self]
}
