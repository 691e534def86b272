import Foundation
public import Models

// MARK: - Circular statistics on the clock

/// Means and spreads of times of day, taken on the 24-hour circle.
///
/// An arithmetic mean of minutes after midnight would make 23:30 and 00:30 average to 12:00.
/// Here every time is an angle on the clock face and the mean is the
/// direction of the summed unit vectors: 23:30 and 00:30 average to 00:00.
public enum CircularTime {
    /// Minutes in a day: the circumference of the clock face.
    public static let minutesPerDay = 1_440

    /// The circular mean of `minutes` (each in 0 ..< 1440, minutes after local midnight) with
    /// its circular standard deviation in minutes, `sqrt(-2 ln R)` scaled to the clock, where
    /// `R` is the length of the mean resultant vector (1 when all times agree).
    ///
    /// Returns nil for no times, and when the times have no mean direction (`R` within 1e-9 of
    /// 0, as for 06:00 and 18:00 exactly): no habitual time exists then, however many points.
    /// The mean is rounded to the nearest minute.
    public static func mean(minutes: some Sequence<Int>) -> (meanMinutes: Int, spreadMinutes: Double)? {
        var sumCos = 0.0
        var sumSin = 0.0
        var count = 0
        let radiansPerMinute = 2 * Double.pi / Double(minutesPerDay)
        for minute in minutes {
            let angle = Double(minute) * radiansPerMinute
            sumCos += cos(angle)
            sumSin += sin(angle)
            count += 1
        }
        guard count > 0 else { return nil }
        let resultant = (sumCos * sumCos + sumSin * sumSin).squareRoot() / Double(count)
        guard resultant > 1e-9 else { return nil }
        let meanAngle = atan2(sumSin, sumCos)
        let rounded = Int((meanAngle / radiansPerMinute).rounded())
        let meanMinutes = ((rounded % minutesPerDay) + minutesPerDay) % minutesPerDay
        // R can exceed 1 by a rounding error; the spread of identical times is exactly 0.
        let spreadRadians = (-2 * log(min(1, resultant))).squareRoot()
        return (meanMinutes, spreadRadians / radiansPerMinute)
    }

    /// The circular mean and spread of `times`; see `mean(minutes:)`.
    public static func mean(of times: some Sequence<LocalTimeOfDay>) -> (
        mean: LocalTimeOfDay, spreadMinutes: Double
    )? {
        guard let result = mean(minutes: times.lazy.map(\.minutesSinceMidnight)) else { return nil }
        return (LocalTimeOfDay(minutesSinceMidnight: result.meanMinutes), result.spreadMinutes)
    }
}
