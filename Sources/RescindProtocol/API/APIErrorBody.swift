extension APIErrorBody {
    public init(code: String, message: String) {
        self.error = Detail(code: code, message: message)
    }
}
