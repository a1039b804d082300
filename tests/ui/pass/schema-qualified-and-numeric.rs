//! A schema-qualified table, numeric and a nullable float4.
use qail::qail;

fn row<D: qail::__private::Decoder>(_: &qail::Query<'_, D>) -> D::Row {
    unimplemented!()
}

fn main() {
    let min = qail::rust_decimal::Decimal::ONE;
    let q = qail!("SELECT number, amount, tax_rate, issued_on FROM billing.invoices WHERE amount > $1", min);
    if false {
        let r = row(&q);
        let _: String = r.number;
        let _: qail::rust_decimal::Decimal = r.amount;
        let _: Option<f32> = r.tax_rate;
        let _: qail::chrono::NaiveDate = r.issued_on;
    }
}
