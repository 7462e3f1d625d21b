import org.apache.camel.builder.RouteBuilder;

// A Java route that does not compile, as in Camel K's invalid-java case: a statement lacks its ';'.
public class Invalid extends RouteBuilder {
    @Override
    public void configure() {
        from("timer:invalid?period=1000")
            .log("never logged")
    }
}
